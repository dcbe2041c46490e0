"""Building jobs and driving a harness's store through the SPI, for the conformance tests.

Jobs are built by ``producer.enqueue.prepare``, the producer's own path, so every record a test
writes is one a ``JobQueue`` could have written. Times are epoch seconds from the
harness's clock; ``at`` lets a test build a record created earlier than now without
waiting, which keeps the real-time kinds fast.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqsjobs import EnqueueRequest, Job, JobFilter, JobStatus
from sqsjobs.core.backoff import Backoff
from sqsjobs.producer.enqueue import Prepared, QueueConfig, prepare

from .harness import Harness

NAME = "conformance.job"


def config(harness: Harness) -> QueueConfig:
    return QueueConfig.build(
        harness.store,
        default_queue="default",
        payload_max_bytes=65536,
        default_max_attempts=3,
        default_timeout=30.0,
        default_lease=30.0,
        backoff=Backoff(),
        clock=harness.clock,
    )


def build(
    harness: Harness,
    name: str = NAME,
    payload: Any = None,
    *,
    at: float | None = None,
    **options: Any,
) -> Prepared:
    """A validated record as the producer would write it, created at ``at`` (default now)."""
    now = harness.now() if at is None else at
    return prepare(config(harness), EnqueueRequest(name, payload, **options), now)


async def put(harness: Harness, name: str = NAME, payload: Any = None, **options: Any) -> Job:
    """Write a new job and return the stored record."""
    prepared = build(harness, name, payload, **options)
    result = await harness.store.put(prepared.job, prepared.fingerprint)
    assert not result.duplicate
    return result.job


async def claim(
    harness: Harness, queue: str = "default", worker: str = "w1", *, limit: int = 1
) -> list[Job]:
    return await harness.store.claim(queue, worker, harness.now(), limit=limit)


async def claim_one(harness: Harness, queue: str = "default", worker: str = "w1") -> Job:
    jobs = await claim(harness, queue, worker)
    assert len(jobs) == 1, jobs
    return jobs[0]


async def get(harness: Harness, job_id: str) -> Job:
    job = await harness.store.get(job_id, harness.now())
    assert job is not None
    return job


async def list_ids(harness: Harness, *, limit: int = 100, **filter: Any) -> list[str]:
    """Ids of every page of ``list`` for ``filter``, in order."""
    ids: list[str] = []
    cursor = None
    while True:
        page = await harness.store.list(JobFilter(**filter), limit, cursor, harness.now())
        assert len(page.jobs) <= limit
        ids += [job.id for job in page.jobs]
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor


def utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def statuses(*names: str) -> frozenset[JobStatus]:
    return frozenset(JobStatus(name) for name in names)


async def settle(harness: Harness, job: Job, status: JobStatus) -> Job:
    """Take a freshly put ``job`` (the only claimable one in its queue) to ``status``."""
    if status is JobStatus.CANCELLED:
        assert await harness.store.cancel(job.id, harness.now())
    elif status is not JobStatus.QUEUED:
        claimed = await claim_one(harness, job.queue)
        assert claimed.id == job.id
        token = claimed.lease_token or ""
        if status is JobStatus.COMPLETED:
            assert await harness.store.complete(job.id, token, harness.now(), "ok")
        elif status is JobStatus.DEAD:
            assert await harness.store.fail(job.id, token, "E: x", None, harness.now())
    settled = await get(harness, job.id)
    assert settled.status is status
    return settled
