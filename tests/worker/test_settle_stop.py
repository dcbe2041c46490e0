"""Stopping a worker while an outcome's write is still being retried.

The write keeps being tried for the stop's grace, heartbeats holding the lease. When
the grace ends with the outcome unrecorded, the run tries to release the job (queued
again at once, the attempt not counted), stops heartbeating and logs what becomes of
the job: released, or, when the release fails too, left to the next claim after its
lease (run again, or dead-lettered after its final attempt). The job is never lost, and
``stop(grace)`` returns soon after the grace.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from sqsjobs import JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.core.lifecycle import LEASE_EXPIRED_ERROR

from .conftest import Env
from .flaky import FlakyWrites, Hooks, events, flaky_env

GRACE = 0.3


async def test_stop_while_a_completion_is_retried_releases_the_job_after_the_grace(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    store = FlakyWrites({"complete": 10_000}, clock=env.clock)
    queue = JobQueue(store, clock=env.clock)
    job = (await queue.enqueue("video.transcode", {"title": "Żubr"})).job
    hooks = Hooks()
    worker = hooks.worker(queue, {"video.transcode": lambda ctx: "ok"})
    worker.start()
    await store.watch.until(lambda: len(store.tries("complete")) > 0)
    assert worker.state.in_flight == 1  # the slot stays taken: the job is not done
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        await worker.stop(grace=GRACE)  # returns, though the completion never succeeds
    released = await queue.get(job.id)
    assert released is not None
    assert (released.status, released.attempts, released.last_error) == (
        JobStatus.QUEUED,
        0,
        "worker is stopping",
    )
    assert hooks.calls == [] and worker.state.in_flight == 0
    [line] = events(caplog, "jobs.released")
    assert line.getMessage() == (
        f"Released job 'video.transcode' ({job.id}) back to its queue: worker is stopping; "
        "its completion was not recorded within the stop's grace (Throttled: complete: "
        "ProvisionedThroughputExceededException: slow down), so it runs again, this attempt "
        "not counted"
    )
    [drained] = events(caplog, "jobs.worker.drained")
    assert drained.__dict__["released"] == [job.id] and drained.__dict__["unsettled"] == []
    assert len(store.tries("release")) == 1


@pytest.mark.parametrize(
    ("max_attempts", "then"),
    [
        (2, "the next claim after its lease runs it again (this was attempt 1 of 2)"),
        (1, "this was its final attempt (1 of 1): the next claim after its lease dead-letters it"),
    ],
)
async def test_stop_while_pending_with_a_failing_release_leaves_the_job_to_its_lease(
    caplog: pytest.LogCaptureFixture, max_attempts: int, then: str
) -> None:
    clock, store, queue = flaky_env({"complete": 10_000, "release": 10_000})
    job = (await queue.enqueue("report.build", max_attempts=max_attempts, lease=30.0)).job
    hooks = Hooks()
    worker = hooks.worker(queue, {"report.build": lambda ctx: "ok"})
    worker.start()
    await store.watch.until(lambda: len(store.tries("complete")) > 0)
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        await worker.stop(grace=GRACE)  # returns, though neither write ever succeeds
    assert len(store.tries("release")) == 1 and hooks.calls == []
    held = await queue.get(job.id)
    assert held is not None and held.lease_until is not None
    assert (held.status, held.attempts) == (JobStatus.RUNNING, 1)
    [gave_up] = [r for r in events(caplog, "jobs.worker.run_failed") if r.levelno == logging.ERROR]
    assert gave_up.getMessage() == (
        f"Could not record the completion of job 'report.build' ({job.id}) before the worker "
        "stopped: Throttled: complete: ProvisionedThroughputExceededException: slow down; "
        "releasing it failed too (Throttled: release: ProvisionedThroughputExceededException: "
        f"slow down); heartbeats stopped, its lease runs out at "
        f"{held.lease_until.isoformat(timespec='milliseconds')}: {then}"
    )
    [drained] = events(caplog, "jobs.worker.drained")
    assert drained.__dict__["unsettled"] == [job.id]
    store.failures.clear()
    clock.advance(31.0)
    again = await JobWorker(queue, {"report.build": lambda ctx: "ok"}).run_once()
    after = await queue.get(job.id)
    assert after is not None
    if max_attempts == 1:  # what the log line said: the next claim dead-letters it
        assert not again
        assert (after.status, after.last_error) == (JobStatus.DEAD, LEASE_EXPIRED_ERROR)
    else:  # the next claim runs it again
        assert again and (after.status, after.attempts) == (JobStatus.COMPLETED, 2)


async def test_a_release_refused_by_a_throttled_store_is_retried(env: Env) -> None:
    store = FlakyWrites({"release": 2}, clock=env.clock)
    queue = JobQueue(store, clock=env.clock)
    job = (await queue.enqueue("index.rebuild")).job
    started = asyncio.Event()

    async def long(ctx: JobContext) -> None:
        started.set()
        await asyncio.sleep(30)

    worker = JobWorker(queue, {"index.rebuild": long})
    worker.start()
    await started.wait()
    assert worker.state.in_flight == 1
    await worker.stop(grace=2.0)  # the handler ignores nothing: the release follows at once
    released = await queue.get(job.id)
    assert released is not None and (released.status, released.attempts) == (JobStatus.QUEUED, 0)
    assert len(store.tries("release")) == 3
