"""Fencing and lease expiry: only the current claim may write (SPEC §2.6 "Fencing")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqsjobs import Job, JobStatus
from sqsjobs.core.lifecycle import LEASE_EXPIRED_ERROR

from .harness import Harness
from .support import claim, claim_one, get, put, utc

Write = Callable[[Harness, Job, str], Awaitable[bool]]


async def _heartbeat(harness: Harness, job: Job, token: str) -> bool:
    return await harness.store.heartbeat(job.id, token, harness.now() + 30, harness.now())


async def _complete(harness: Harness, job: Job, token: str) -> bool:
    return await harness.store.complete(job.id, token, harness.now(), {"ok": True})


async def _fail(harness: Harness, job: Job, token: str) -> bool:
    return await harness.store.fail(job.id, token, "E: x", None, harness.now())


async def _release(harness: Harness, job: Job, token: str) -> bool:
    return await harness.store.release(job.id, token, "E: x", harness.now())


WRITES: dict[str, Write] = {
    "heartbeat": _heartbeat,
    "complete": _complete,
    "fail": _fail,
    "release": _release,
}


async def test_heartbeat_extends_the_lease(harness: Harness) -> None:
    # A lease a loaded machine's stall between claim and heartbeat does not outlast.
    await put(harness, lease=5)
    job = await claim_one(harness)
    now = harness.now()
    assert await harness.store.heartbeat(job.id, job.lease_token or "", now + 20, now)
    after = await get(harness, job.id)
    assert (after.status, after.lease_until, after.lease_token) == (
        JobStatus.RUNNING,
        utc(now + 20),
        job.lease_token,
    )


async def test_writes_with_a_wrong_token_or_id_are_refused(harness: Harness) -> None:
    await put(harness)
    job = await claim_one(harness)
    ghost = job.model_copy(update={"id": "0" * 32})
    for name, write in WRITES.items():
        assert not await write(harness, job, "not-the-token"), name
        assert not await write(harness, ghost, job.lease_token or ""), name
    assert await get(harness, job.id) == job


async def test_writes_after_the_job_left_running_are_refused(harness: Harness) -> None:
    await put(harness)
    job = await claim_one(harness)
    token = job.lease_token or ""
    assert await harness.store.complete(job.id, token, harness.now(), None)
    done = await get(harness, job.id)
    for name, write in WRITES.items():
        assert not await write(harness, job, token), name
    assert await get(harness, job.id) == done


async def test_an_expired_lease_is_reclaimed_and_the_stale_run_fenced_out(
    harness: Harness,
) -> None:
    await put(harness, lease=1, max_attempts=3)
    old = await claim_one(harness, worker="w1")
    await harness.advance(1.5)
    now = harness.now()
    # The same worker id claims again: only the token tells the two runs apart.
    [new] = await harness.store.claim("default", "w1", now)
    assert (new.id, new.status, new.attempts) == (old.id, JobStatus.RUNNING, 2)
    assert (new.locked_by, new.lease_until) == ("w1", utc(now + 1))
    assert new.lease_token not in (None, old.lease_token)
    for name, write in WRITES.items():
        assert not await write(harness, old, old.lease_token or ""), name
    assert await get(harness, new.id) == new
    assert await harness.store.complete(new.id, new.lease_token or "", harness.now(), None)
    assert (await get(harness, new.id)).status is JobStatus.COMPLETED


async def test_an_expired_lease_refuses_heartbeats_but_keeps_the_holders_outcome(
    harness: Harness,
) -> None:
    """Expiry takes effect at the next claim, never on a read or a write by the holder."""
    outcomes = {
        "complete": JobStatus.COMPLETED,
        "fail": JobStatus.DEAD,
        "release": JobStatus.QUEUED,
    }
    for _ in outcomes:
        await put(harness, lease=1, max_attempts=3)
    jobs = [await claim_one(harness) for _ in outcomes]
    await harness.advance(1.5)
    for job, (write, status) in zip(jobs, outcomes.items(), strict=True):
        expired = await get(harness, job.id)
        assert expired == job
        assert expired.lease_until is not None
        assert expired.lease_until < utc(harness.now())
        assert not await _heartbeat(harness, job, job.lease_token or "")
        assert await WRITES[write](harness, job, job.lease_token or ""), write
        assert (await get(harness, job.id)).status is status


async def test_a_lease_expiring_on_the_final_attempt_dead_letters_the_job(
    harness: Harness,
) -> None:
    await put(harness, lease=1, max_attempts=1)
    job = await claim_one(harness)
    await harness.advance(1.5)
    now = harness.now()
    assert await harness.store.claim("default", "w2", now) == []
    dead = await get(harness, job.id)
    assert (dead.status, dead.last_error, dead.attempts, dead.updated_at) == (
        JobStatus.DEAD,
        LEASE_EXPIRED_ERROR,
        1,
        utc(now),
    )
    assert (dead.lease_token, dead.locked_by, dead.lease_until, dead.completed_at) == (
        None,
        None,
        None,
        None,
    )
    assert not await _complete(harness, job, job.lease_token or "")
    assert await claim(harness) == []
