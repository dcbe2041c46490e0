"""Retention: terminal records vanish for every reader once it ends, and free their key."""

from __future__ import annotations

from sqsjobs import Job, JobStatus

from .harness import BOTH_FACES, DEAD_RETENTION, RETENTION, Harness
from .support import build, claim_one, list_ids, put, settle

pytestmark = BOTH_FACES


async def _keyed(harness: Harness, key: str, status: JobStatus, **options: object) -> Job:
    """A job under idempotency key ``key``, taken to ``status`` now."""
    return await settle(
        harness, await put(harness, payload=key, idempotency_key=key, **options), status
    )


async def _visible(harness: Harness, job: Job) -> bool:
    """Whether every reader still sees ``job``: get, list, and the idempotency lookup."""
    got = await harness.store.get(job.id, harness.now())
    listed = job.id in await list_ids(harness)
    again = build(
        harness, payload=job.payload, idempotency_key=job.idempotency_key, queue=job.queue
    )
    result = await harness.store.put(again.job, again.fingerprint)
    if result.duplicate:
        assert result.job.id == job.id
    else:  # the key was free: take the new job away again
        assert await harness.store.cancel(result.job.id, harness.now())
    assert (got is not None) == listed == result.duplicate, (got, listed, result)
    return got is not None


async def test_completed_and_cancelled_records_expire_after_retention(harness: Harness) -> None:
    completed = await _keyed(harness, "done", JobStatus.COMPLETED)
    cancelled = await _keyed(harness, "gone", JobStatus.CANCELLED)
    await harness.advance(0.5)
    assert await _visible(harness, completed)
    assert await _visible(harness, cancelled)
    await harness.advance(RETENTION - 0.5 + 0.2)
    assert not await _visible(harness, completed)
    assert not await _visible(harness, cancelled)


async def test_dead_records_outlive_retention_and_waiting_ones_never_expire(
    harness: Harness,
) -> None:
    dead = await _keyed(harness, "dead", JobStatus.DEAD)
    queued = await _keyed(harness, "queued", JobStatus.QUEUED)
    running = await put(harness, payload="r", idempotency_key="r", queue="other", lease=60)
    assert (await claim_one(harness, "other")).id == running.id
    await harness.advance(RETENTION + 0.2)
    assert await _visible(harness, dead)
    await harness.advance(DEAD_RETENTION - RETENTION)
    assert not await _visible(harness, dead)
    assert await _visible(harness, queued)
    assert await _visible(harness, running)
