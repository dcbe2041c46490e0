"""``stats --watch``, ``jobs list --watch``: snapshots until Ctrl-C, in a real process.

Piped, each snapshot follows the last (a table under a timestamped rule, or a JSON line);
on a terminal (a pseudo-terminal here) the table is redrawn in place. A real SIGINT, as
Ctrl-C sends it, ends either with exit 0 and nothing on stderr.
"""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping
from typing import IO

import pytest

from sqsjobs import SyncJobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import Env, invoke, wait_until
from .test_worker import ROOT, SCRIPT

pytestmark = pytest.mark.slow  # real command processes, pseudo-terminals and SIGINT

TITLE = "Jobs and messages per queue"
RULE = re.compile(r"^─+ \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ─+$", re.MULTILINE)


class Watching:
    """``sqsjobs ARGS`` in a subprocess, its output collected as it comes."""

    def __init__(self, env: Mapping[str, str | None], *args: str, stdout: int | None = None):
        merged = {**os.environ, "PYTHONUNBUFFERED": "1", **env}
        self.process = subprocess.Popen(
            [str(SCRIPT), *args],
            cwd=ROOT,
            env={key: value for key, value in merged.items() if value is not None},
            stdout=subprocess.PIPE if stdout is None else stdout,
            stderr=subprocess.PIPE,
        )
        self.output = bytearray()
        source = self.process.stdout
        self._reader = threading.Thread(target=self._read, args=(source,), daemon=True)
        if source is not None:
            self._reader.start()

    def _read(self, source: IO[bytes] | Callable[[], bytes]) -> None:
        while chunk := source() if callable(source) else source.read1(4096):
            self.output.extend(chunk)

    def read_from(self, descriptor: int) -> None:
        def read() -> bytes:
            try:
                return os.read(descriptor, 4096)
            except OSError:  # the terminal's other end closed
                return b""

        self._reader = threading.Thread(target=self._read, args=(read,), daemon=True)
        self._reader.start()

    @property
    def text(self) -> str:
        return bytes(self.output).decode(errors="replace")

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C: the exit code and stderr once the process has ended."""
        self.process.send_signal(signal.SIGINT)
        try:
            _, errors = self.process.communicate(timeout=30)
        finally:
            self.process.kill()
        self._reader.join(timeout=10)
        return self.process.returncode, errors.decode()


def test_piped_stats_watch_prints_a_snapshot_each_interval_and_ctrl_c_exits_0(
    store: SqsJobStore, cli_env: Env
) -> None:
    SyncJobQueue(store).enqueue("report.build", {"month": "2026-11"}, tenant="acme")
    watching = Watching(cli_env, "stats", "--watch", "0.2")
    wait_until(lambda: watching.text.count(TITLE) >= 2, what="two snapshots")
    code, errors = watching.interrupt()
    assert (code, errors) == (0, "")
    snapshots = watching.text.count(TITLE)
    assert len(RULE.findall(watching.text)) in (snapshots, snapshots + 1)
    assert "\x1b[" not in watching.text  # nothing redrawn: a log of snapshots
    first = watching.text.split(TITLE)[1]
    assert re.search(r"│ default +│ +1 │ +0 │", first), first


def test_stats_watch_json_writes_one_document_per_line(store: SqsJobStore, cli_env: Env) -> None:
    SyncJobQueue(store).enqueue("report.build", {"month": "2026-11"})
    watching = Watching(cli_env, "stats", "--json", "--watch", "0.2")
    wait_until(lambda: watching.text.count("\n") >= 2, what="two JSON lines")
    code, errors = watching.interrupt()
    assert (code, errors) == (0, "")
    documents = [json.loads(line) for line in watching.text.splitlines()]
    assert len(documents) >= 2
    for document in documents:
        [default] = document
        assert (default["queue"], default["counts"]["queued"]) == ("default", 1)


def test_stats_watch_on_a_terminal_redraws_in_place(cli_env: Env) -> None:
    main, terminal = pty.openpty()
    try:
        env = {**cli_env, "TERM": "xterm"}
        watching = Watching(env, "stats", "--watch", "0.2", stdout=terminal)
        watching.read_from(main)
        footer = "Every 0.2s, last at "
        wait_until(lambda: watching.text.count(footer) >= 2, what="two redraws")
        code, errors = watching.interrupt()
    finally:
        os.close(terminal)
        os.close(main)
    assert (code, errors) == (0, "")
    assert "\x1b[" in watching.text  # the cursor moved back up over the last view
    assert watching.text.count(TITLE) >= 2
    assert not RULE.search(watching.text)


def test_jobs_list_watch_shows_a_job_enqueued_meanwhile(store: SqsJobStore, cli_env: Env) -> None:
    producer = SyncJobQueue(store)
    first = producer.enqueue("report.build", {"month": "2026-10"}, tenant="acme").job.id
    watching = Watching(cli_env, "jobs", "list", "--tenant", "acme", "--watch", "0.2")
    title = "Jobs of tenant acme in every queue"
    wait_until(lambda: watching.text.count(title) >= 1, what="the first snapshot")
    second = producer.enqueue("report.build", {"month": "2026-11"}, tenant="acme").job.id
    wait_until(lambda: second in watching.text, what="the job enqueued meanwhile")
    code, errors = watching.interrupt()
    assert (code, errors) == (0, "")
    snapshots = watching.text.split(title)[1:]
    assert first in snapshots[0] and second not in snapshots[0]
    assert first in snapshots[-1] and second in snapshots[-1]


def test_jobs_list_watch_refuses_all(cli_env: Env) -> None:
    result = invoke(cli_env, "jobs", "list", "--all", "--watch")
    assert result.exit_code == 2, result.output
    assert "--watch shows the first page again and again; it takes no --all" in result.stderr
