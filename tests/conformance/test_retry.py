"""``retry``, the operator's call that runs a dead job again: the same on every store.

Not in the ``JobStore`` protocol but its own capability (``RetryStore``): both stores
have it, on both faces, and the dashboard's Retry relies on them agreeing.
"""

from __future__ import annotations

from typing import Any

from sqsjobs import JobStatus

from .harness import BOTH_FACES, Harness
from .support import claim_one, get, put, utc

pytestmark = BOTH_FACES


async def test_retry_queues_a_dead_job_with_its_attempts_reset(harness: Harness) -> None:
    store: Any = harness.store
    await put(harness, max_attempts=3)
    job = await claim_one(harness)
    error = "PaymentDeclined: card ending 4242 declined (東京)"
    assert await store.fail(job.id, job.lease_token or "", error, None, harness.now())
    now = harness.now()
    assert await store.retry(job.id, now)
    revived = await get(harness, job.id)
    assert (revived.status, revived.attempts, revived.last_error) == (JobStatus.QUEUED, 0, error)
    assert (revived.run_at, revived.updated_at) == (utc(now), utc(now))
    again = await claim_one(harness)
    assert (again.id, again.attempts) == (job.id, 1)


async def test_retry_refuses_a_job_that_is_not_dead(harness: Harness) -> None:
    store: Any = harness.store
    job = await put(harness)
    assert not await store.retry(job.id, harness.now())
    assert not await store.retry("0123456789abcdef0123456789abcdef", harness.now())
    assert (await get(harness, job.id)).status is JobStatus.QUEUED
