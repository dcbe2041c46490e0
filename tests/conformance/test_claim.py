"""claim: leasing due jobs, limits, queues, delays and long polls (SPEC §2.6)."""

from __future__ import annotations

import asyncio

from sqsjobs import JobStatus

from .harness import Harness
from .support import build, claim, claim_one, get, put, utc


async def test_claim_leases_the_job_to_the_worker(harness: Harness) -> None:
    queued = await put(harness, lease=1.5, max_attempts=2)
    now = harness.now()
    [job] = await harness.store.claim("default", "worker-a", now)
    assert job.id == queued.id
    assert (job.status, job.attempts, job.locked_by) == (JobStatus.RUNNING, 1, "worker-a")
    assert job.lease_token
    assert job.lease_until == utc(now + 1.5)
    assert job.updated_at == utc(now)
    assert job.model_dump(
        exclude={"status", "attempts", "locked_by", "lease_token", "lease_until", "updated_at"}
    ) == queued.model_dump(
        exclude={"status", "attempts", "locked_by", "lease_token", "lease_until", "updated_at"}
    )
    assert await get(harness, job.id) == job


async def test_only_waiting_jobs_are_claimed(harness: Harness) -> None:
    assert await claim(harness) == []
    cancelled = await put(harness)
    assert await harness.store.cancel(cancelled.id, harness.now())
    assert await claim(harness) == []
    await put(harness)
    await claim_one(harness)
    assert await claim(harness, worker="w2") == []


async def test_every_claim_counts_an_attempt_and_issues_a_new_token(harness: Harness) -> None:
    await put(harness, max_attempts=5)
    first = await claim_one(harness)
    assert await harness.store.release(first.id, first.lease_token or "", "E: x", harness.now())
    second = await claim_one(harness)
    assert await harness.store.fail(
        second.id, second.lease_token or "", "E: y", harness.now(), harness.now()
    )
    third = await claim_one(harness)
    assert [first.attempts, second.attempts, third.attempts] == [1, 1, 2]
    tokens = {first.lease_token, second.lease_token, third.lease_token}
    assert len(tokens) == 3
    assert None not in tokens


async def test_claim_returns_at_most_limit_jobs(harness: Harness) -> None:
    ids = {(await put(harness, payload=i)).id for i in range(3)}
    first = await claim(harness, limit=2)
    second = await claim(harness, limit=2)
    assert (len(first), len(second)) == (2, 1)
    assert {job.id for job in first + second} == ids
    assert all(job.status is JobStatus.RUNNING for job in first + second)
    assert await claim(harness, limit=2) == []


async def test_claim_takes_only_from_its_queue(harness: Harness) -> None:
    other = await put(harness, queue="other")
    assert await claim(harness, "default") == []
    default = await put(harness, queue="default")
    assert [job.id for job in await claim(harness, "other")] == [other.id]
    assert [job.id for job in await claim(harness, "default")] == [default.id]


async def test_delayed_job_stays_delayed_until_claimed(harness: Harness) -> None:
    job = await put(harness, delay=1)
    assert await claim(harness) == []
    await harness.advance(1.5)
    after_run_at = await get(harness, job.id)
    assert after_run_at.status is JobStatus.DELAYED
    assert after_run_at.run_at < utc(harness.now())
    claimed = await claim_one(harness)
    assert (claimed.id, claimed.status, claimed.attempts) == (job.id, JobStatus.RUNNING, 1)


async def test_claim_with_wait_returns_a_job_put_while_waiting(harness: Harness) -> None:
    async with harness.claim_waiting():
        waiting = asyncio.create_task(harness.store.claim("default", "w1", harness.now(), wait=2))
    assert not waiting.done()
    prepared = build(harness)
    stored = (await harness.store.put(prepared.job, prepared.fingerprint)).job
    [job] = await waiting
    assert (job.id, job.status, job.attempts) == (stored.id, JobStatus.RUNNING, 1)
