"""``sqsjobs worker --log-format``: what the worker process writes, read as an operator's
log pipeline reads it (every line of a real worker's output, against the emulator).

The ``note`` handler logs its payload's text through ``ctx.log``; the text tries to end
the line and print a forged record of its own, and to clear the terminal.
"""

from __future__ import annotations

import json
import re
import signal
import time
from datetime import datetime
from typing import Any

import sqsjobs
from sqsjobs import JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from tests.support.processes import ended

from .conftest import Env, wait_until
from .test_worker import get, start_worker

FORGED = "2026-12-01T00:00:00.000Z INFO    sqsjobs: Completed job 'refund' (forged)"
TEXT = f"Grüße aus Köln\n{FORGED}\x1b[2J\u2028{FORGED}"
NOT_A_NUMBER = "invalid literal for int() with base 10"
TEXT_LINE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR) +\S+: ")


def run_note(store: SqsJobStore, cli_env: Env, *args: str) -> tuple[str, str, str]:
    """Serve one ``note`` job for tenant acme; its id, and the worker's stdout and stderr."""
    job_id = SyncJobQueue(store).enqueue("note", {"text": TEXT}, tenant="acme").job.id
    worker = start_worker(cli_env, *args)
    try:
        wait_until(lambda: get(store, job_id).status is JobStatus.COMPLETED, what="the note")
        # The completion's log record follows the store's write, in the same run, which
        # the worker's drain lets finish before it exits.
        worker.send_signal(signal.SIGTERM)
        out, log = worker.communicate(timeout=30)
    finally:
        ended(worker)
    assert worker.returncode == 0, log
    return job_id, out, log


def test_json_is_the_default_off_a_terminal_one_object_per_line(
    store: SqsJobStore, cli_env: Env
) -> None:
    started = time.time()
    job_id, out, log = run_note(store, cli_env)
    assert out == ""
    records = [json.loads(line) for line in log.splitlines()]  # every line, or it raises
    assert FORGED not in [record["message"] for record in records]

    [noted] = [r for r in records if r["message"].startswith("Noted ")]
    assert noted["message"] == f"Noted {TEXT}"
    job_keys = {"job_id": job_id, "job_name": "note", "queue": "default", "attempt": 1}
    assert noted | job_keys | {"tenant": "acme", "chars": len(TEXT)} == noted
    assert (noted["level"], noted["logger"]) == ("INFO", "sqsjobs")
    assert noted["timestamp"].endswith("Z")
    stamp = datetime.fromisoformat(noted["timestamp"]).timestamp()
    assert started - 1 <= stamp <= time.time() + 1
    assert "exception" not in noted

    [warned] = [r for r in records if r["message"] == "Not a number, kept as text"]
    assert warned | job_keys == warned and warned["level"] == "WARNING"
    assert warned["exception"].startswith("Traceback (most recent call last):")
    assert warned["exception"].endswith(
        f"ValueError: invalid literal for int() with base 10: {TEXT!r}"
    )

    by_event: dict[str, dict[str, Any]] = {r["event"]: r for r in records if "event" in r}
    assert by_event["jobs.claim"] | job_keys | {"tenant": "acme"} == by_event["jobs.claim"]
    assert by_event["jobs.complete"]["job_id"] == job_id
    assert by_event["jobs.worker.started"]["queues"] == ["default"]
    # Every line says which release wrote it, the start line in its message too.
    assert {record["sqsjobs_version"] for record in records} == {sqsjobs.__version__}
    started_line = by_event["jobs.worker.started"]
    assert started_line["message"].endswith(f"(sqsjobs {sqsjobs.__version__})")
    assert "jobs.worker.stopped" in by_event


def test_text_puts_the_job_fields_after_the_message_on_one_line(
    store: SqsJobStore, cli_env: Env
) -> None:
    job_id, out, log = run_note(store, cli_env, "--log-format", "text")
    assert out == ""
    lines = log.splitlines()
    for line in lines:  # a record starts a line; only a traceback's lines are indented
        assert TEXT_LINE.match(line) or line.startswith("    "), line
    assert not any(line.lstrip().startswith(FORGED) for line in lines)
    fields = f"job_id={job_id} job_name=note queue=default attempt=1 tenant=acme"
    escaped = TEXT.replace("\n", "\\n").replace("\x1b", "\\x1b").replace("\u2028", "\\u2028")
    [noted] = [line for line in lines if " sqsjobs: Noted " in line]
    assert noted.endswith(f" INFO    sqsjobs: Noted {escaped} {fields} chars={len(TEXT)}")
    warned = lines.index(next(line for line in lines if "Not a number" in line))
    assert lines[warned].endswith(f"Not a number, kept as text {fields}")
    assert lines[warned + 1] == "    Traceback (most recent call last):"
    claimed = next(line for line in lines if "Claimed job 'note'" in line)
    assert claimed.endswith(fields)
    started = next(line for line in lines if " started on default " in line)
    assert started.endswith(f"with concurrency 1 (sqsjobs {sqsjobs.__version__})")
