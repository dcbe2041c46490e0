"""What a worker process logs when it is stopped or a job it runs is cancelled.

Real worker processes, real signals, the emulator behind them; their stderr is read as
it comes, one JSON record per line (the format off a terminal).
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Mapping
from typing import Any

import pytest

from sqsjobs import JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import Env, invoke, wait_until
from .handlers import SLEEP_CAP
from .test_worker import get, start_worker

Record = dict[str, Any]


class Worker:
    """``sqsjobs worker`` in a subprocess, its log records collected as they are written."""

    def __init__(self, env: Mapping[str, str | None], *args: str) -> None:
        self.process = start_worker(env, *args)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    @property
    def records(self) -> list[Record]:
        return [json.loads(line) for line in list(self.lines)]

    def events(self, event: str) -> list[Record]:
        return [record for record in self.records if record.get("event") == event]

    def wait_for(self, event: str, **fields: Any) -> Record:
        def found() -> list[Record]:
            return [r for r in self.events(event) if r | fields == r]

        wait_until(lambda: bool(found()), what=f"{event} {fields} in {self.lines}")
        return found()[0]

    def end(self, signum: signal.Signals) -> int:
        """Send ``signum``; the exit code once the process and its log have ended."""
        self.process.send_signal(signum)
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        self._reader.join(timeout=10)
        return code

    def close(self) -> None:
        """Kill the process if it still runs, and close its pipes."""
        self.process.kill()
        self.process.wait(timeout=30)
        self._reader.join(timeout=10)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


def test_cancelling_a_running_job_logs_a_cancellation_not_a_lost_lease(
    store: SqsJobStore, cli_env: Env
) -> None:
    job = SyncJobQueue(store).enqueue("sleep", {"seconds": 120}, tenant="acme", lease=1.5).job
    worker = Worker({**cli_env, SLEEP_CAP: None})
    try:
        worker.wait_for("jobs.claim", job_id=job.id)
        result = invoke(cli_env, "jobs", "cancel", job.id)
        assert result.exit_code == 0, result.output
        cancelled = worker.wait_for("jobs.cancelled", job_id=job.id)
        code = worker.end(signal.SIGINT)
    finally:
        worker.close()
    assert code == 0, worker.lines
    assert cancelled["message"] == (
        f"Job 'sleep' ({job.id}) was cancelled while it ran: its lease was lost"
    )
    assert (cancelled["level"], cancelled["tenant"], cancelled["attempt"]) == ("INFO", "acme", 1)
    assert worker.events("jobs.lease_lost") == []
    assert get(store, job.id).status is JobStatus.CANCELLED
    [signalled] = worker.events("jobs.worker.signal")
    assert (signalled["signal"], signalled["message"]) == (
        "SIGINT",
        "Received SIGINT: claiming no more jobs (grace 20s)",
    )
    [draining] = worker.events("jobs.worker.draining")
    assert (draining["message"], draining["job_ids"]) == ("Draining: no job running", [])


@pytest.mark.slow
def test_sigterm_logs_the_signal_the_drain_and_the_released_ids_and_loses_nothing(
    store: SqsJobStore, cli_env: Env
) -> None:
    producer = SyncJobQueue(store)
    quick = producer.enqueue("sleep", {"seconds": 2.0}).job.id
    slow = producer.enqueue("sleep", {"seconds": 120}).job.id
    first = Worker({**cli_env, SLEEP_CAP: None}, "--concurrency", "2", "--grace", "4")
    try:
        for job_id in (quick, slow):
            first.wait_for("jobs.claim", job_id=job_id)
        code = first.end(signal.SIGTERM)
    finally:
        first.close()
    assert code == 0, first.lines

    events = [record.get("event") for record in first.records]
    order = ["jobs.worker.signal", "jobs.worker.draining", "jobs.worker.drained"]
    assert [event for event in events if event in order] == order
    assert events[-1] == "jobs.worker.stopped"
    [signalled] = first.events("jobs.worker.signal")
    assert signalled["message"] == "Received SIGTERM: claiming no more jobs (grace 4s)"
    [draining] = first.events("jobs.worker.draining")
    assert sorted(draining["job_ids"]) == sorted([quick, slow])
    assert draining["message"].startswith("Draining 2 running job(s), up to 4s to finish: ")
    [drained] = first.events("jobs.worker.drained")
    assert (drained["finished"], drained["released"], drained["unsettled"]) == ([quick], [slow], [])
    assert drained["message"].endswith(
        f": 1 job(s) finished, 1 released back to their queue: {slow}"
    )
    assert get(store, quick).status is JobStatus.COMPLETED
    released = get(store, slow)
    assert (released.status, released.attempts) == (JobStatus.QUEUED, 0)

    second = Worker({**cli_env, SLEEP_CAP: "0"})
    try:
        wait_until(lambda: get(store, slow).status is JobStatus.COMPLETED, what="the rerun")
        code = second.end(signal.SIGINT)
    finally:
        second.close()
    assert code == 0, second.lines
    assert get(store, slow).attempts == 1
    [drained] = second.events("jobs.worker.drained")
    assert (drained["finished"], drained["released"]) == ([], [])
