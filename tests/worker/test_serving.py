"""The serving worker: start/stop, concurrency, queue order, wake-ups, drains and signals."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from typing import Any

import pytest

from sqsjobs import (
    Job,
    JobConfigError,
    JobContext,
    JobQueue,
    JobStatus,
    JobWorker,
    MemoryJobStore,
)

from .conftest import Env
from .watch import Finished, WatchedStore


async def status_of(queue: JobQueue, job: Job) -> JobStatus | None:
    current = await queue.get(job.id)
    return None if current is None else current.status


async def all_completed(queue: JobQueue, *jobs: Job) -> bool:
    return all([await status_of(queue, job) is JobStatus.COMPLETED for job in jobs])


def watched(env: Env) -> tuple[WatchedStore, JobQueue]:
    store = WatchedStore(clock=env.clock)
    return store, JobQueue(store, clock=env.clock)


async def test_start_twice_or_after_stop_is_refused(env: Env) -> None:
    worker = JobWorker(env.queue, {"a": lambda ctx: None})
    worker.start()
    with pytest.raises(JobConfigError, match="already started"):
        worker.start()
    assert worker.state.running
    await worker.stop()
    assert not worker.state.running
    with pytest.raises(JobConfigError, match="was stopped"):
        worker.start()


async def test_an_idle_worker_starts_a_new_job_at_once(env: Env) -> None:
    store, queue = watched(env)
    finished = Finished()
    async with JobWorker(
        queue, {"a": lambda ctx: "done"}, on_complete=finished.on_complete
    ) as worker:
        await store.watch.until(lambda: store.long_polls == ["default"])  # parked in its poll
        job = (await queue.enqueue("a")).job
        await finished.all_completed(job)  # within the safety net, far below the poll's 20 s
        assert await all_completed(queue, job)
        assert worker.state.in_flight == 0


async def test_never_more_runs_than_concurrency(env: Env) -> None:
    running, peak = 0, 0

    async def handler(ctx: JobContext) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.02)
        running -= 1

    jobs = [(await env.queue.enqueue("a")).job for _ in range(12)]
    finished = Finished()
    async with JobWorker(
        env.queue, {"a": handler}, concurrency=3, on_complete=finished.on_complete
    ):
        await finished.all_completed(*jobs)
        assert await all_completed(env.queue, *jobs)
    assert peak == 3


async def test_earlier_queues_are_claimed_first(env: Env) -> None:
    order: list[str] = []
    late = [(await env.queue.enqueue("a", "low", queue="low")).job for _ in range(2)]
    early = [(await env.queue.enqueue("a", "high", queue="high")).job for _ in range(2)]
    handlers = {"a": lambda payload: order.append(payload)}
    worker = JobWorker(env.queue, handlers, queues=["high", "low"])
    while await worker.run_once():
        pass
    assert order == ["high", "high", "low", "low"]
    order.clear()
    again: list[Job] = []
    for _ in range(2):
        again.append((await env.queue.enqueue("a", "low", queue="low")).job)
        again.append((await env.queue.enqueue("a", "high", queue="high")).job)
    finished = Finished()
    async with JobWorker(
        env.queue, handlers, queues=["high", "low"], on_complete=finished.on_complete
    ) as serving:
        await finished.all_completed(*again)
        assert len(order) == 4
        assert serving.state.in_flight == 0
    assert order == ["high", "high", "low", "low"]
    assert {await status_of(env.queue, j) for j in late + early} == {JobStatus.COMPLETED}


class FlakyStore(MemoryJobStore):
    """Claims fail a few times first, as a throttled backend would."""

    def __init__(self, failures: int, **options: Any) -> None:
        super().__init__(**options)
        self.failures = failures

    async def claim(
        self, queue: str, worker_id: str, now: float, *, limit: int = 1, wait: float = 0.0
    ) -> list[Job]:
        if self.failures > 0:
            self.failures -= 1
            raise ConnectionError("backend unavailable")
        return await super().claim(queue, worker_id, now, limit=limit, wait=wait)


async def test_claim_errors_are_logged_and_retried(caplog: pytest.LogCaptureFixture) -> None:
    queue = JobQueue(FlakyStore(failures=2))
    job = (await queue.enqueue("a")).job
    finished = Finished()
    with caplog.at_level(logging.ERROR, logger="sqsjobs"):
        async with JobWorker(
            queue, {"a": lambda ctx: None}, poll_interval=0.01, on_complete=finished.on_complete
        ):
            await finished.all_completed(job, timeout=10)
            assert await all_completed(queue, job)
    failures = [r for r in caplog.records if r.__dict__.get("event") == "jobs.worker.claim_failed"]
    assert len(failures) == 2
    assert failures[0].__dict__["error"] == "ConnectionError: backend unavailable"


async def test_stop_lets_short_runs_finish_and_releases_long_ones(env: Env) -> None:
    hooks: list[Any] = []
    started: list[float] = []
    both_started = asyncio.Event()

    async def handler(payload: float) -> str:
        started.append(payload)
        if len(started) == 2:
            both_started.set()
        await asyncio.sleep(payload)  # the run's work: short for one job, long for the other
        return "done"

    quick = (await env.queue.enqueue("a", 0.01)).job
    slow = (await env.queue.enqueue("a", 30.0)).job
    worker = JobWorker(env.queue, {"a": handler}, concurrency=2, on_fail=hooks.append)
    worker.start()
    await both_started.wait()
    assert worker.state.in_flight == 2
    await worker.stop(grace=0.2)
    assert await status_of(env.queue, quick) is JobStatus.COMPLETED
    released = await env.queue.get(slow.id)
    assert released is not None
    assert (released.status, released.attempts, released.last_error) == (
        JobStatus.QUEUED,
        0,
        "worker is stopping",
    )
    assert hooks == []


async def test_stop_releases_a_run_that_ignores_cancellation(env: Env) -> None:
    done_ignoring, started = asyncio.Event(), asyncio.Event()

    async def stubborn(ctx: JobContext) -> None:
        started.set()
        while not done_ignoring.is_set():
            try:
                await done_ignoring.wait()
            except asyncio.CancelledError:
                continue

    job = (await env.queue.enqueue("a")).job
    worker = JobWorker(env.queue, {"a": stubborn})
    worker.start()
    await started.wait()
    assert worker.state.in_flight == 1
    await worker.stop(grace=0.05)
    released = await env.queue.get(job.id)
    done_ignoring.set()  # let the orphaned handler end so the event loop can close
    assert released is not None and released.status is JobStatus.QUEUED
    assert released.attempts == 0


async def test_a_long_poll_claim_beyond_free_slots_is_released(env: Env) -> None:
    gate, started = asyncio.Event(), asyncio.Event()

    async def handler(ctx: JobContext) -> None:
        started.set()
        await gate.wait()

    store, queue = watched(env)
    finished = Finished()
    worker = JobWorker(
        queue, {"a": handler}, queues=["one", "two"], on_complete=finished.on_complete
    )
    async with worker:
        await store.watch.until(lambda: sorted(store.long_polls) == ["one", "two"])
        first = (await queue.enqueue("a", queue="one")).job
        await started.wait()
        assert worker.state.in_flight == 1
        second = (await queue.enqueue("a", queue="two")).job  # the poll on "two" gets it
        await store.watch.until(lambda: second.id in store.released)
        waiting = await queue.get(second.id)
        assert waiting is not None and waiting.status is JobStatus.QUEUED
        assert waiting.attempts == 0
        gate.set()
        await finished.all_completed(first, second)
        assert await all_completed(queue, first, second)


async def test_run_drains_on_sigterm(env: Env) -> None:
    started = asyncio.Event()

    async def handler(ctx: JobContext) -> str:
        started.set()
        await asyncio.sleep(0.05)
        return "finished during the drain"

    job = (await env.queue.enqueue("a")).job
    worker = JobWorker(env.queue, {"a": handler})
    serving = asyncio.ensure_future(worker.run(grace=5))
    await started.wait()
    os.kill(os.getpid(), signal.SIGTERM)
    await asyncio.wait_for(serving, 10)
    assert await status_of(env.queue, job) is JobStatus.COMPLETED
    assert not worker.state.running
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
