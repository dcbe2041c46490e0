"""A restart loses no time: jobs a stopping worker's last long poll meets run at once.

SQS (and the emulator) keeps a ``ReceiveMessage`` long poll running after its client
gave up on it, and hands the messages that arrive meanwhile to that abandoned poll,
which hides them for the visibility timeout (30 s). A worker stopped while it
long-polls would so hide a job enqueued just after the stop, and the job a drain
released, from the worker that replaces it. These tests stop real worker processes
with real signals, against the session's emulator, and time the next worker.
"""

from __future__ import annotations

import signal
import time

import pytest

from sqsjobs import JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from tests.aws.emulator import COUNTER

from .conftest import Env, wait_until
from .handlers import SLEEP_CAP
from .test_worker import get
from .test_worker_drain import Worker

RECEIVES = ("sqs", "ReceiveMessage")
# A job the next worker runs at once takes its start-up (about 2 s on a loaded machine);
# one hidden by an abandoned poll takes the visibility timeout, 30 s.
AT_ONCE = 10.0


def long_polling(worker: Worker, receives_before: int) -> None:
    """Wait until ``worker`` has started and its long poll has reached the emulator."""
    worker.wait_for("jobs.worker.started")
    COUNTER.wait_until(lambda counts: counts.requests[RECEIVES] > receives_before, timeout=20)
    time.sleep(0.2)  # arrived is not yet served: let the emulator start waiting on it


def handed_back(worker: Worker) -> list[str]:
    return [r["message"] for r in worker.records if r["message"].startswith("Handed back")]


def test_a_job_enqueued_as_an_idle_worker_stops_runs_at_once_on_the_next(
    store: SqsJobStore, cli_env: Env
) -> None:
    env = {**cli_env, SLEEP_CAP: None}
    first = Worker(env, "--reconcile-every", "0", "--wait-time", "20")  # SQS's longest poll
    try:
        long_polling(first, COUNTER.counts().requests[RECEIVES])
        first.process.send_signal(signal.SIGTERM)
        job = SyncJobQueue(store).enqueue("sleep", {"seconds": 0}).job
        enqueued = time.monotonic()
        code = first.process.wait(timeout=30)
    finally:
        first.close()
    assert code == 0, first.lines
    assert get(store, job.id).status is JobStatus.QUEUED  # the stopping worker ran nothing

    second = Worker(env, "--reconcile-every", "0")
    try:
        wait_until(
            lambda: get(store, job.id).status is JobStatus.COMPLETED,
            timeout=AT_ONCE,
            what="the job enqueued during the stop",
        )
        took = time.monotonic() - enqueued
    finally:
        second.close()  # killed: its own poll cannot hide anything from anyone now
    assert took < AT_ONCE
    assert get(store, job.id).attempts == 1
    # The stopping worker's poll got the job, and the worker handed it back as it exited.
    assert handed_back(first) == ["Handed back 1 message(s) a cancelled long poll received"]


@pytest.mark.slow
def test_a_job_released_by_a_drain_runs_at_once_on_the_next_worker(
    store: SqsJobStore, cli_env: Env
) -> None:
    producer = SyncJobQueue(store)
    slow = producer.enqueue("sleep", {"seconds": 120}).job.id
    env = {**cli_env, SLEEP_CAP: None}
    receives = COUNTER.counts().requests[RECEIVES]
    # Two slots, one job: the free slot keeps a long poll open while the job runs.
    first = Worker(
        env, "--concurrency", "2", "--grace", "1", "--reconcile-every", "0", "--wait-time", "20"
    )
    try:
        first.wait_for("jobs.claim", job_id=slow)
        long_polling(first, receives + 1)
        stopped = time.monotonic()
        code = first.end(signal.SIGTERM)
    finally:
        first.close()
    assert code == 0, first.lines
    [drained] = first.events("jobs.worker.drained")
    assert drained["released"] == [slow]
    released = get(store, slow)
    assert (released.status, released.attempts) == (JobStatus.QUEUED, 0)
    # The drain released the job while the worker's long poll was still open: the poll
    # took the message, and the worker handed it back before it exited.
    assert time.monotonic() - stopped < 10

    second = Worker({**env, SLEEP_CAP: "0"}, "--reconcile-every", "0")
    try:
        restarted = time.monotonic()
        wait_until(
            lambda: get(store, slow).status is JobStatus.COMPLETED,
            timeout=AT_ONCE,
            what="the released job",
        )
        took = time.monotonic() - restarted
    finally:
        second.close()
    assert took < AT_ONCE
    assert get(store, slow).attempts == 1
    assert handed_back(first) == ["Handed back 1 message(s) a cancelled long poll received"]


@pytest.mark.slow
def test_an_idle_worker_stops_within_its_long_poll(store: SqsJobStore, cli_env: Env) -> None:
    """The price: an idle worker waits out its last long poll (20 s at most) before it
    exits, so that whatever that poll is handed goes back to the queue; ``--wait-time``
    bounds that wait."""
    worker = Worker(cli_env, "--reconcile-every", "0", "--wait-time", "3")
    try:
        long_polling(worker, COUNTER.counts().requests[RECEIVES])
        stopped = time.monotonic()
        code = worker.end(signal.SIGTERM)
        took = time.monotonic() - stopped
    finally:
        worker.close()
    assert code == 0, worker.lines
    assert took < 3 + 5
    [waiting] = [r["message"] for r in worker.records if r["message"].startswith("Waiting up to")]
    assert waiting.endswith(
        "for 1 cancelled long poll(s) to end: what SQS still hands them "
        "goes back to the queue at once"
    )
    assert handed_back(worker) == []
    assert [r["event"] for r in worker.records if "event" in r][-1] == "jobs.worker.stopped"
