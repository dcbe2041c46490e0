"""A write refused while the record still shows this run's lease is tried again.

Every outcome's write is fenced on the claim's token, so the store refusing it means
another claim, a cancellation, or the write's own earlier try. A refusal that the
record read after it contradicts (still running under this token, not showing the
write) is none of these: the store erred (an unexpected ``ConditionalCheckFailed``).
Taking it for a lost lease would leave the job to the next claim, which dead-letters a
final attempt its handler completed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from sqsjobs import JobContext, JobQueue, JobStatus, JobWorker, MemoryJobStore

from ..support.clock import FakeClock


class SpuriousRefusals(MemoryJobStore):
    """Refuses the first ``refusals`` completions without applying them."""

    def __init__(self, refusals: int, *, clock: Any) -> None:
        super().__init__(clock=clock)
        self.refusals = refusals
        self.completions = 0

    async def complete(self, job_id: str, lease_token: str, now: float, result: Any) -> bool:
        self.completions += 1
        if self.refusals > 0:
            self.refusals -= 1
            return False
        return await super().complete(job_id, lease_token, now, result)


async def test_a_completion_refused_while_the_lease_is_ours_is_tried_again(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    store = SpuriousRefusals(2, clock=clock)
    queue = JobQueue(store, clock=clock)
    job = (await queue.enqueue("invoice.render", {"n°": 1042}, max_attempts=1)).job
    runs: list[int] = []

    async def render(ctx: JobContext) -> str:
        runs.append(ctx.attempt)
        return "rendered"

    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await JobWorker(queue, {"invoice.render": render}, clock=clock).run_once()
    done = await queue.get(job.id)
    assert done is not None and (done.status, done.result) == (JobStatus.COMPLETED, "rendered")
    assert runs == [1] and store.completions == 3
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("while the lease was still this run's" in line for line in warned)
    clock.advance(3_600.0)
    assert not await JobWorker(queue, {"invoice.render": render}, clock=clock).run_once()


async def test_a_completion_refused_after_the_job_was_cancelled_is_not_tried_again(
    clock: FakeClock,
) -> None:
    store = MemoryJobStore(clock=clock)
    queue = JobQueue(store, clock=clock)
    job = (await queue.enqueue("invoice.render", {"n°": 1043})).job

    async def render(ctx: JobContext) -> str:
        assert await queue.cancel(job.id)
        return "rendered"

    assert await JobWorker(queue, {"invoice.render": render}, clock=clock).run_once()
    ended = await queue.get(job.id)
    assert ended is not None and ended.status is JobStatus.CANCELLED


class SpuriousHeartbeatRefusal(MemoryJobStore):
    """Refuses the first heartbeat without looking at the record."""

    def __init__(self) -> None:
        super().__init__(clock=time.time)
        self.beats: list[bool] = []

    async def heartbeat(
        self, job_id: str, lease_token: str, lease_until: float, now: float
    ) -> bool:
        held = bool(self.beats) and await super().heartbeat(job_id, lease_token, lease_until, now)
        self.beats.append(held)
        return held


async def test_a_heartbeat_refused_while_the_lease_is_ours_does_not_stop_the_handler(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = SpuriousHeartbeatRefusal()
    queue = JobQueue(store)
    job = (await queue.enqueue("video.transcode", {"title": "Ærø"}, lease=0.9, max_attempts=1)).job

    async def transcode(ctx: JobContext) -> str:
        await asyncio.sleep(0.8)  # two heartbeats: the first refused
        return "transcoded"

    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await JobWorker(queue, {"video.transcode": transcode}).run_once()
    done = await queue.get(job.id)
    assert done is not None and (done.status, done.result) == (JobStatus.COMPLETED, "transcoded")
    assert store.beats[0] is False
    failed = [
        r.getMessage() for r in caplog.records if r.__dict__.get("event") == "jobs.heartbeat_failed"
    ]
    assert failed and "while the lease was still this run's" in failed[0]
