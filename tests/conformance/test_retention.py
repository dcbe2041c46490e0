"""Retention: terminal records vanish for every reader once it ends, and free their key."""

from __future__ import annotations

from sqsjobs import Job, JobStatus

from .harness import DEAD_RETENTION, RETENTION, Harness
from .support import build, claim_one, list_ids, put


async def _finish(harness: Harness, key: str, status: JobStatus) -> Job:
    """Put a keyed job and take it to ``status`` now."""
    job = await put(harness, payload=key, idempotency_key=key)
    if status is JobStatus.CANCELLED:
        assert await harness.store.cancel(job.id, harness.now())
        return job
    claimed = await claim_one(harness)
    assert claimed.id == job.id
    token = claimed.lease_token or ""
    if status is JobStatus.COMPLETED:
        assert await harness.store.complete(job.id, token, harness.now(), None)
    else:
        assert await harness.store.fail(job.id, token, "E: x", None, harness.now())
    return job


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
    completed = await _finish(harness, "done", JobStatus.COMPLETED)
    cancelled = await _finish(harness, "gone", JobStatus.CANCELLED)
    await harness.advance(RETENTION / 2)
    assert await _visible(harness, completed)
    assert await _visible(harness, cancelled)
    await harness.advance(RETENTION / 2 + 0.2)
    assert not await _visible(harness, completed)
    assert not await _visible(harness, cancelled)


async def test_dead_records_are_kept_for_dead_retention(harness: Harness) -> None:
    dead = await _finish(harness, "dead", JobStatus.DEAD)
    await harness.advance(RETENTION + 0.2)
    assert await _visible(harness, dead)
    await harness.advance(DEAD_RETENTION - RETENTION)
    assert not await _visible(harness, dead)


async def test_waiting_and_running_records_never_expire(harness: Harness) -> None:
    queued = await put(harness, payload="q", idempotency_key="q")
    running = await put(harness, payload="r", idempotency_key="r", queue="other", lease=60)
    claimed = await claim_one(harness, "other")
    assert claimed.id == running.id
    await harness.advance(DEAD_RETENTION + 0.2)
    assert await _visible(harness, queued)
    assert await _visible(harness, running)
