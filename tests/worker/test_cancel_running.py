"""A job cancelled while it runs is logged as cancelled, not as a lease another claim took.

The store refuses the run's heartbeat or outcome alike in both cases; the run reads the
record once, after the refusal, to tell them apart.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from sqsjobs import JobContext, JobQueue, JobStatus, JobWorker, MemoryJobStore


def events(caplog: pytest.LogCaptureFixture, event: str) -> list[logging.LogRecord]:
    """The records of ``event`` a run wrote (the producer's own cancel record has no worker)."""
    return [
        record
        for record in caplog.records
        if record.__dict__.get("event") == event and "worker_id" in record.__dict__
    ]


async def test_a_job_cancelled_while_it_runs_stops_at_its_next_heartbeat_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue = JobQueue(MemoryJobStore())
    job = (await queue.enqueue("video.transcode", tenant="acme", lease=0.3)).job
    started = asyncio.Event()

    async def transcode(ctx: JobContext) -> None:
        started.set()
        await asyncio.sleep(60)

    async def cancel_once_running() -> None:
        await started.wait()
        assert await queue.cancel(job.id)

    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        canceller = asyncio.create_task(cancel_once_running())
        await asyncio.wait_for(JobWorker(queue, {"video.transcode": transcode}).run_once(), 5)
        await canceller
    [cancelled] = events(caplog, "jobs.cancelled")
    assert cancelled.getMessage() == (
        f"Job 'video.transcode' ({job.id}) was cancelled while it ran: its lease was lost"
    )
    assert (cancelled.levelno, cancelled.__dict__["tenant"]) == (logging.INFO, "acme")
    assert events(caplog, "jobs.lease_lost") == []
    record = await queue.get(job.id)
    assert record is not None and record.status is JobStatus.CANCELLED


async def test_a_completion_refused_because_the_job_was_cancelled_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue = JobQueue(MemoryJobStore())
    job = (await queue.enqueue("invoice.send", {"invoice": "INV-2026-0042"})).job

    async def send(ctx: JobContext) -> str:
        assert await queue.cancel(ctx.job.id)  # an operator, just before the handler returns
        return "sent"

    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await JobWorker(queue, {"invoice.send": send}).run_once()
    [cancelled] = events(caplog, "jobs.cancelled")
    assert cancelled.getMessage() == (
        f"Job 'invoice.send' ({job.id}) was cancelled while it ran: "
        "the store refused its completion"
    )
    assert events(caplog, "jobs.complete") == events(caplog, "jobs.lease_lost") == []


class UnreadableRecords(MemoryJobStore):
    """A store whose reads fail: after a refusal the run cannot tell why."""

    async def get(self, job_id: str, now: float) -> Any:
        raise ConnectionError("the table is unreachable")


async def test_when_the_record_cannot_be_read_a_refusal_is_reported_as_a_lost_lease(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = UnreadableRecords()
    queue = JobQueue(store)
    job = (await queue.enqueue("invoice.send")).job

    async def send(ctx: JobContext) -> None:
        assert await store.cancel(ctx.job.id, time.time())

    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await JobWorker(queue, {"invoice.send": send}).run_once()
    [lost] = events(caplog, "jobs.lease_lost")
    assert lost.getMessage() == (
        f"Job 'invoice.send' ({job.id}) belongs to another claim: the store refused its completion"
    )
    assert events(caplog, "jobs.cancelled") == []
