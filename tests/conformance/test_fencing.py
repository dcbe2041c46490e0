"""Fencing and lease expiry: only the current claim may write (SPEC §2.6 "Fencing")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from sqsjobs import Job, JobStatus
from sqsjobs._lifecycle import LEASE_EXPIRED_ERROR

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
    await put(harness, lease=1)
    job = await claim_one(harness)
    now = harness.now()
    assert await harness.store.heartbeat(job.id, job.lease_token or "", now + 20, now)
    after = await get(harness, job.id)
    assert (after.status, after.lease_until, after.lease_token) == (
        JobStatus.RUNNING, utc(now + 20), job.lease_token,
    )  # fmt: skip


@pytest.mark.parametrize("write", list(WRITES))
async def test_writes_with_a_wrong_token_are_refused(harness: Harness, write: str) -> None:
    await put(harness)
    job = await claim_one(harness)
    assert not await WRITES[write](harness, job, "not-the-token")
    assert await get(harness, job.id) == job


@pytest.mark.parametrize("write", list(WRITES))
async def test_writes_to_an_unknown_job_are_refused(harness: Harness, write: str) -> None:
    await put(harness)
    job = await claim_one(harness)
    ghost = job.model_copy(update={"id": "0" * 32})
    assert not await WRITES[write](harness, ghost, job.lease_token or "")


@pytest.mark.parametrize("write", list(WRITES))
async def test_writes_after_the_job_left_running_are_refused(harness: Harness, write: str) -> None:
    await put(harness)
    job = await claim_one(harness)
    token = job.lease_token or ""
    assert await harness.store.complete(job.id, token, harness.now(), None)
    done = await get(harness, job.id)
    assert not await WRITES[write](harness, job, token)
    assert await get(harness, job.id) == done


async def test_a_stale_run_cannot_overwrite_a_newer_claim_by_the_same_worker(
    harness: Harness,
) -> None:
    await put(harness, lease=1, max_attempts=3)
    old = await claim_one(harness, worker="w1")
    await harness.advance(1.5)
    new = await claim_one(harness, worker="w1")
    assert (new.id, new.attempts) == (old.id, 2)
    assert new.lease_token != old.lease_token
    for write in WRITES.values():
        assert not await write(harness, old, old.lease_token or "")
    assert await get(harness, new.id) == new
    assert await harness.store.complete(new.id, new.lease_token or "", harness.now(), None)
    assert (await get(harness, new.id)).status is JobStatus.COMPLETED


async def test_heartbeat_is_refused_once_the_lease_has_expired(harness: Harness) -> None:
    await put(harness, lease=1)
    job = await claim_one(harness)
    await harness.advance(1.5)
    assert not await _heartbeat(harness, job, job.lease_token or "")
    assert await get(harness, job.id) == job


@pytest.mark.parametrize(
    ("write", "status"),
    [("complete", JobStatus.COMPLETED), ("fail", JobStatus.DEAD), ("release", JobStatus.QUEUED)],
)
async def test_lease_expiry_waits_for_the_next_claim(
    harness: Harness, write: str, status: JobStatus
) -> None:
    await put(harness, lease=1, max_attempts=3)
    job = await claim_one(harness)
    await harness.advance(1.5)
    # A read does not apply expiry: the record is still running under the old lease.
    expired = await get(harness, job.id)
    assert expired == job
    assert expired.lease_until is not None
    assert expired.lease_until < utc(harness.now())
    # So the holder's late outcome is still accepted.
    assert await WRITES[write](harness, job, job.lease_token or "")
    assert (await get(harness, job.id)).status is status


async def test_an_expired_lease_is_reclaimed_with_a_new_attempt_and_token(
    harness: Harness,
) -> None:
    await put(harness, lease=1, max_attempts=2)
    first = await claim_one(harness, worker="w1")
    await harness.advance(1.5)
    now = harness.now()
    [second] = await harness.store.claim("default", "w2", now)
    assert (second.id, second.status, second.attempts) == (first.id, JobStatus.RUNNING, 2)
    assert (second.locked_by, second.lease_until) == ("w2", utc(now + 1))
    assert second.lease_token not in (None, first.lease_token)


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
        JobStatus.DEAD, LEASE_EXPIRED_ERROR, 1, utc(now),
    )  # fmt: skip
    assert (dead.lease_token, dead.locked_by, dead.lease_until, dead.completed_at) == (
        None, None, None, None,
    )  # fmt: skip
    assert not await _complete(harness, job, job.lease_token or "")
    assert await claim(harness) == []
