"""Running README blocks as a reader would: one section's blocks in order, in one directory.

A ``Session`` is a temporary directory holding the README's own modules (every block that
starts ``# app/....py``), and an environment naming the emulator's endpoint and the
README's stacks. Each block runs as a real program there:

- a module block is written (with the others, first) and imported, so it must import;
- another Python block runs as a script (``python block.py``), or, marked ``given:``,
  through ``tests.examples.given``, which supplies the names it continues from;
- a shell block's commands run in ``bash``, one after another, each to exit 0;
- a command or script that serves (a worker, an emulator, a ``--watch``) runs in the
  background: a worker until the jobs made during the session have ended, then SIGTERM,
  and it must exit 0 as a drained worker does; an emulator until the section ends, its
  ``export`` lines becoming the environment of the section's later blocks, as the README
  says to paste them; a watch until its first snapshot, then Ctrl-C (SIGINT).

What a console block shows after a command is compared with what it printed: digits
apart (times, ports, durations), each shown line must come out, in order.
"""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from sqsjobs import Job, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.store.config import parse_urls
from tests.cli.process import closed_port
from tests.support.processes import ended

from .blocks import ROOT, Block, readme
from .commands import Command, commands
from .given import FILES

TIMEOUT = 90.0  # for one command or script; a stuck one fails instead of hanging the run
WAKE = {"to": "wake@example.com", "name": "a worker stopping"}
_DIGITS = re.compile(r"\d+")
_EXPORT = re.compile(r"^\s*export (\w+)=(\S*)\s*$")
_UNSET = re.compile(r"^\s*unset ((?:\w+ ?)+)\s*$")


class Session:
    """One section's run; a context manager that ends whatever it started."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        self.directory = directory
        self.env = dict(env)
        self.started = time.time()  # the jobs of this session are those created since
        self._serving: list[tuple[str, subprocess.Popen[bytes], Path]] = []
        self._started: list[subprocess.Popen[bytes]] = []  # ended at exit, whatever happened
        self._woken: set[str] = set()  # the jobs that ended a worker's poll (not the README's)
        for block in readme().blocks:
            if block.file:
                path = directory / block.file
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(block.text)

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        serving, self._serving = self._serving, []
        try:
            for what, process, log in reversed(serving if kind is None else []):
                _stop(what, process, log, signal.SIGINT)  # Ctrl-C, as the README says
        finally:
            for process in self._started:
                ended(process)

    # -- blocks -------------------------------------------------------------------------

    def run(self, block: Block) -> str:
        """Run ``block`` as the README means it; what it printed (an assertion if it failed)."""
        if block.not_run:
            return ""
        if block.lang == "python":
            return self._python(block)
        for name in block.given():
            (self.directory / name).write_text(FILES[name])
        return "".join(self._command(block, command) for command in self.runnable(block))

    @staticmethod
    def runnable(block: Block) -> list[Command]:
        """The commands of a shell block that run here (``Command.unrunnable``)."""
        return [command for command in commands(block) if command.unrunnable() is None]

    def _python(self, block: Block) -> str:
        text, _ = self._ported(block, block.text)
        if block.file:
            module = block.file.removesuffix(".py").replace("/", ".")
            return self._check(block.name, [sys.executable, "-c", f"import {module}"])
        script = self.directory / f"readme_{block.line}.py"
        script.write_text(text)
        argv = [sys.executable, script.name]
        env = None
        if block.given() or _awaits(text):
            argv = [sys.executable, "-m", "tests.examples.given", script.name, *block.given()]
            env = {**self.env, "PYTHONPATH": str(ROOT)}
        if block.serves:
            return self._serve_jobs(block.name, argv, env)
        return self._check(block.name, argv, env)

    def _command(self, block: Block, command: Command) -> str:
        text, ports = self._ported(block, command.text)
        what = f"{block.name}: {command.text}"
        if not command.serves:
            out = self._check(what, ["bash", "-c", text])
            _compare(what, _ports_in(command.output, ports), out)
            return out
        words = command.stages()[0]
        if words[1] == "worker":
            return self._serve_jobs(what, ["bash", "-c", f"exec {text}"])
        process, log = self._start(["bash", "-c", f"exec {text}"])
        if "--watch" in words:
            _wait_for(what, process, log, lambda out: bool(out.strip()))
            return _stop(what, process, log, signal.SIGINT)
        if words[1] == "emulator":
            self._serving.append((what, process, log))
            out = _wait_for(what, process, log, lambda out: "Press Ctrl-C" in out)
            _compare(what, _ports_in(command.output, ports), out)
            self._paste(out)
            return out
        raise AssertionError(f"{what}: no rule to run this command; mark its block")

    # -- processes ----------------------------------------------------------------------

    def _check(self, what: str, argv: list[str], env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            argv,
            cwd=self.directory,
            env=env or self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
            check=False,
        )
        out = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
        assert done.returncode == 0, f"{what} exited {done.returncode}:\n{out}"
        return out

    def _start(
        self, argv: list[str], env: dict[str, str] | None = None
    ) -> tuple[subprocess.Popen[bytes], Path]:
        log = self.directory / f"serving-{len(list(self.directory.glob('serving-*')))}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                argv,
                cwd=self.directory,
                env=env or self.env,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        self._started.append(process)
        return process, log

    def _serve_jobs(self, what: str, argv: list[str], env: dict[str, str] | None = None) -> str:
        """Run a worker until the session's jobs have ended, then stop it as ECS does."""
        with self.store() as store:
            queue = SyncJobQueue(store)
            assert self._pending(queue), f"{what}: no job for it to run, so nothing shows it runs"
            process, log = self._start(argv, env)
            _wait_for(what, process, log, lambda _: not self._pending(queue), timeout=TIMEOUT)
            process.send_signal(signal.SIGTERM)
            # An idle worker is in a long poll, which a stopping worker lets end (up to
            # 20 s) so that what it receives goes back to the queue. A message ends it
            # now: a job of the README's, queued again for whichever worker comes next.
            self._woken.add(queue.enqueue("email.welcome", WAKE).job.id)
            return _stop(what, process, log, None)

    def _pending(self, queue: SyncJobQueue) -> list[Job]:
        now = time.time()
        return [
            job
            for job in self.jobs(queue)
            if job.status in (JobStatus.QUEUED, JobStatus.RUNNING)
            or (job.status is JobStatus.DELAYED and job.run_at.timestamp() <= now)
        ]

    def jobs(self, queue: SyncJobQueue) -> list[Job]:
        """The README's jobs of this session: created since it started, and not one that
        only ended a worker's poll (``_serve_jobs``)."""
        found: list[Job] = []
        cursor = None
        while True:
            page = queue.list(limit=100, cursor=cursor)
            found += [
                job
                for job in page.jobs
                if job.created_at.timestamp() >= self.started and job.id not in self._woken
            ]
            if page.next_cursor is None:
                return found
            cursor = page.next_cursor

    def store(self) -> SqsJobStore:
        """The store the session's environment names, as ``SqsJobStore.from_env`` reads it."""
        endpoint = self.env["AWS_ENDPOINT_URL"]
        if stack := self.env.get("SQSJOBS_STACK"):
            return SqsJobStore.from_stack(stack, endpoint_url=endpoint)
        queues = parse_urls(self.env["SQSJOBS_QUEUES"], "SQSJOBS_QUEUES")
        table = self.env["SQSJOBS_TABLE"]
        return SqsJobStore(table_name=table, queue_urls=queues, endpoint_url=endpoint)

    def _paste(self, printed: str) -> None:
        """The ``export``/``unset`` lines an emulator printed, into the environment."""
        for line in printed.splitlines():
            if found := _EXPORT.match(line):
                self.env[found[1]] = found[2]
            elif found := _UNSET.match(line):
                for name in found[1].split():
                    self.env.pop(name, None)
        for name in ("SQSJOBS_TABLE", "SQSJOBS_QUEUES", "SQSJOBS_DEAD_LETTER_QUEUES"):
            self.env.pop(name, None)  # the pasted stack names the store from here on

    def _ported(self, block: Block, text: str) -> tuple[str, dict[str, str]]:
        """``text`` with each port the block's marks name replaced by a free one."""
        ports = {str(port): str(closed_port()) for port in block.ports()}
        for old, new in ports.items():
            text = text.replace(old, new)
        return text, ports


def _awaits(text: str) -> bool:
    """Whether a program awaits at its top level, which only a notebook-like runner runs."""
    try:
        compile(text, "block", "exec")
    except SyntaxError:
        compile(text, "block", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        return True
    return False


def _ports_in(lines: tuple[str, ...], ports: dict[str, str]) -> tuple[str, ...]:
    for old, new in ports.items():
        lines = tuple(line.replace(old, new) for line in lines)
    return lines


def _compare(what: str, shown: tuple[str, ...], printed: str) -> None:
    """What the README shows after a command came out: JSON of the same shape (its records
    with the same fields), or else each shown line, digits apart, in order."""
    if not any(line.strip() for line in shown):
        return
    try:
        expected = json.loads("\n".join(shown))
    except json.JSONDecodeError:
        expected = None
    if expected is not None:
        actual = json.loads(printed)
        assert type(actual) is type(expected), f"{what}: printed {printed}"
        fields = [list(record) for record in actual if isinstance(record, dict)]
        assert all(f == list(expected[0]) for f in fields), f"{what}: printed {printed}"
        return
    lines = iter([_masked(line) for line in printed.splitlines()])
    for line in shown:
        if line.strip():
            assert _masked(line) in lines, f"{what}: {line!r} is not in what it printed:\n{printed}"


def _masked(line: str) -> str:
    return " ".join(_DIGITS.sub("0", line).split())


def _wait_for(
    what: str,
    process: subprocess.Popen[bytes],
    log: Path,
    ready: Callable[[str], bool],
    timeout: float = 60.0,
) -> str:
    """Until ``ready(output so far)``; fails if the process ends or the time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        out = log.read_text(errors="replace")
        if ready(out):
            return out
        if process.poll() is not None:
            raise AssertionError(f"{what} exited {process.returncode} early:\n{out}")
        if time.monotonic() > deadline:
            ended(process)
            raise AssertionError(f"{what}: not ready after {timeout}s:\n{out}")
        time.sleep(0.2)


def _stop(what: str, process: subprocess.Popen[bytes], log: Path, signum: int | None) -> str:
    """Signal it as an operator would (SIGTERM, Ctrl-C; ``None``: signalled already); it
    must exit 0 in time."""
    if signum is not None:
        process.send_signal(signum)
    try:
        process.wait(timeout=60)
    finally:
        ended(process)
    out = log.read_text(errors="replace")
    assert process.returncode == 0, f"{what} exited {process.returncode} on signal {signum}:\n{out}"
    return out


def environment(endpoint: str, stacks: dict[str, str], home: Path) -> dict[str, str]:
    """A reader's shell on this machine: no AWS or sqsjobs setting of the machine running the
    tests, the emulator's endpoint and dummy keys, the README's stacks as
    ``SqsJobStore.from_env`` reads them, this interpreter's scripts first on ``PATH``, and
    an AWS profile ``orders`` (the README's SDK example names it)."""
    from tests.aws.emulator import ENVIRONMENT

    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SQSJOBS_"))}
    config = home / "aws-config"
    config.write_text(
        "[profile orders]\nregion = us-east-1\n"
        "aws_access_key_id = testing\naws_secret_access_key = testing\n"
    )
    env |= ENVIRONMENT | stacks
    env |= {"AWS_ENDPOINT_URL": endpoint, "AWS_CONFIG_FILE": str(config), "HOME": str(home)}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    # SQSJOBS_WAIT_TIME: a stopping `sqsjobs worker` waits out its last long poll; 1 s keeps
    # the stops short. The README's commands read the same with it.
    quick = {"SQSJOBS_WAIT_TIME": "1"}
    return env | quick | {"NO_COLOR": "1", "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}
