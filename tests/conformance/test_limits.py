"""Limit slots and the delayed release (SPEC §6: handler limits), on every store alike.

A slot is free when nobody holds it or its holder's ``until`` has passed; only its
holder extends or frees it. A deferred start is a release with ``run_at``: the job waits
``delayed`` until then, its attempt not counted.
"""

from __future__ import annotations

import uuid

from sqsjobs import JobStatus
from sqsjobs.core.store import LimitStore, SlotTaken

from .harness import Harness
from .support import claim, claim_one, get, list_ids, put, utc


def slots(harness: Harness) -> LimitStore:
    assert isinstance(harness.store, LimitStore)
    return harness.store


def a_key() -> str:
    return f"concurrency/report.build/{uuid.uuid4().hex[:8]}"


async def test_a_take_holds_the_first_free_slot_in_the_order_given(harness: Harness) -> None:
    store, key, now = slots(harness), a_key(), harness.now()
    assert await store.take_slot(key, [1, 0], "run-a", now + 30, now) == SlotTaken(1, None)
    assert await store.take_slot(key, [1, 0], "run-b", now + 40, now) == SlotTaken(0, None)
    refused = await store.take_slot(key, [0, 1], "run-c", now + 50, now)
    assert refused.slot is None
    assert refused.free_at is not None and now + 30 <= refused.free_at < now + 40


async def test_only_the_holder_extends_or_frees_its_slot(harness: Harness) -> None:
    store, key, now = slots(harness), a_key(), harness.now()
    assert (await store.take_slot(key, [0], "run-a", now + 30, now)).slot == 0
    assert not await store.extend_slot(key, 0, "run-b", now + 60, now)
    assert not await store.free_slot(key, 0, "run-b", now)
    assert await store.extend_slot(key, 0, "run-a", now + 60, now)
    refused = await store.take_slot(key, [0], "run-b", now + 30, now)
    assert refused.slot is None and refused.free_at is not None and refused.free_at >= now + 60
    assert await store.free_slot(key, 0, "run-a", now)
    assert not await store.free_slot(key, 0, "run-a", now)  # freed once
    assert (await store.take_slot(key, [0], "run-b", now + 30, now)).slot == 0


async def test_a_slot_whose_lease_ended_is_free_again(harness: Harness) -> None:
    """A crashed holder stops extending: its slot frees itself when its lease ends."""
    store, key, now = slots(harness), a_key(), harness.now()
    assert (await store.take_slot(key, [0], "crashed", now + 1, now)).slot == 0
    assert (await store.take_slot(key, [0], "heir", now + 30, now)).slot is None
    await harness.advance(1.5)
    later = harness.now()
    assert await store.take_slot(key, [0], "heir", later + 30, later) == SlotTaken(0, None)
    assert not await store.extend_slot(key, 0, "crashed", later + 30, later)


async def test_keys_are_independent_and_slots_are_not_jobs(harness: Harness) -> None:
    store, now = slots(harness), harness.now()
    job = await put(harness, tenant="acme")
    for key in ["concurrency/a", "concurrency/a/acme", "rate/a/-"]:
        assert (await store.take_slot(key, [0], "run-a", now + 30, now)).slot == 0
    assert await list_ids(harness) == [job.id]
    assert await list_ids(harness, statuses=frozenset({JobStatus.QUEUED})) == [job.id]


async def test_a_release_with_run_at_delays_the_job_without_spending_an_attempt(
    harness: Harness,
) -> None:
    await put(harness, max_attempts=2)
    job = await claim_one(harness)
    now = harness.now()
    why = "deferred: concurrency limit 'concurrency/x' (2) reached"
    assert await harness.store.release(job.id, job.lease_token or "", why, now, run_at=now + 1)
    deferred = await get(harness, job.id)
    assert (deferred.status, deferred.run_at, deferred.attempts, deferred.last_error) == (
        JobStatus.DELAYED,
        utc(now + 1),
        0,
        why,
    )
    assert deferred.lease_token is None
    assert await claim(harness) == []
    await harness.advance(1.5)
    again = await claim_one(harness)
    assert (again.id, again.attempts) == (job.id, 1)


async def test_a_release_with_a_past_run_at_queues_the_job_at_once(harness: Harness) -> None:
    await put(harness)
    job = await claim_one(harness)
    now = harness.now()
    assert await harness.store.release(job.id, job.lease_token or "", "x", now, run_at=now - 5)
    released = await get(harness, job.id)
    assert (released.status, released.run_at, released.attempts) == (
        JobStatus.QUEUED,
        utc(now),
        0,
    )
    assert (await claim_one(harness)).id == job.id
