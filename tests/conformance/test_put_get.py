"""put, put_many and get: round trips, copies, and idempotency keys (SPEC §2.4, §2.6).

Variants of one rule share a test (a loop, not a parametrization) so that a store with
real I/O pays for one fresh store per rule, not per variant.
"""

from __future__ import annotations

import pytest

from sqsjobs import JobBatchError, JobIdempotencyConflictError, JobStatus

from .harness import BOTH_FACES, Harness
from .support import build, claim_one, get, list_ids, put, settle, utc

pytestmark = BOTH_FACES


async def test_put_returns_the_record_and_get_reads_it_back(harness: Harness) -> None:
    now = harness.now()
    prepared = build(
        harness,
        "mail.send",
        {"to": ["a@b.c"], "n": 1.5, "ok": True, "none": None},
        idempotency_key="k-1",
        tenant="acme",
        priority=7,
        max_attempts=4,
        timeout=12.5,
        lease=9.0,
        at=now,
    )
    result = await harness.store.put(prepared.job, prepared.fingerprint)
    assert result.duplicate is False
    assert result.job.model_dump(exclude={"id"}) == prepared.job.model_dump(exclude={"id"})
    assert await get(harness, result.job.id) == result.job
    assert result.job.status is JobStatus.QUEUED
    assert result.job.created_at == result.job.run_at == result.job.updated_at == utc(now)
    assert await harness.store.get("0" * 32, harness.now()) is None


async def test_labels_are_kept_as_given_through_every_write_and_read(harness: Harness) -> None:
    """A data field (``core.fields``): stored, copied out, and left by every outcome."""
    labels = {"team": "billing", "Quelle": "Import 7 — ü", "empty": ""}
    prepared = build(harness, "mail.send", {"n": 1}, labels=labels)
    stored = (await harness.store.put(prepared.job, prepared.fingerprint)).job
    assert stored.labels == labels
    stored.labels["team"] = "changed by a caller"
    assert (await get(harness, stored.id)).labels == labels
    read = await settle(harness, stored, JobStatus.COMPLETED)
    assert (read.status, read.labels) == (JobStatus.COMPLETED, labels)
    plain = build(harness, "mail.send", {"n": 2})
    assert (await harness.store.put(plain.job, plain.fingerprint)).job.labels == {}
    assert (await get(harness, plain.job.id)).labels == {}


async def test_put_of_a_future_job_stores_it_delayed(harness: Harness) -> None:
    now = harness.now()
    job = await put(harness, delay=30, at=now)
    assert (job.status, job.run_at) == (JobStatus.DELAYED, utc(now + 30))
    assert (await get(harness, job.id)).status is JobStatus.DELAYED


async def test_reads_return_copies_that_cannot_change_the_store(harness: Harness) -> None:
    payload = {"items": [1, {"deep": "x"}]}
    prepared = build(harness, payload=payload)
    stored = (await harness.store.put(prepared.job, prepared.fingerprint)).job
    payload["items"].append(2)
    assert isinstance(prepared.job.payload, dict)
    prepared.job.payload["new"] = 1
    assert isinstance(stored.payload, dict)
    stored.payload["items"].clear()
    read = await get(harness, stored.id)
    assert isinstance(read.payload, dict)
    read.payload["items"].append(3)
    assert (await get(harness, stored.id)).payload == {"items": [1, {"deep": "x"}]}

    job = await claim_one(harness)
    result = {"rows": [1, 2]}
    assert await harness.store.complete(job.id, job.lease_token or "", harness.now(), result)
    result["rows"].append(3)
    done = await get(harness, job.id)
    assert isinstance(done.result, dict)
    done.result["rows"].clear()
    assert (await get(harness, job.id)).result == {"rows": [1, 2]}


# -- idempotency ------------------------------------------------------------------------

# Queued last: settle() claims the only claimable job, so none may be left waiting before.
STATUSES = [
    JobStatus.RUNNING,
    JobStatus.COMPLETED,
    JobStatus.DEAD,
    JobStatus.CANCELLED,
    JobStatus.QUEUED,
]


async def test_same_key_and_request_is_a_duplicate_whatever_the_status(harness: Harness) -> None:
    for status in STATUSES:
        key = f"k-{status}"
        first = await put(harness, payload={"a": 1, "b": 2}, idempotency_key=key, tenant="t1")
        existing = await settle(harness, first, status)
        # Options other than name, tenant and payload may differ; key order does not matter.
        again = build(
            harness,
            payload={"b": 2, "a": 1},
            idempotency_key=key,
            tenant="t1",
            priority=9,
            delay=60,
            max_attempts=1,
            lease=5,
        )
        result = await harness.store.put(again.job, again.fingerprint)
        assert (result.duplicate, result.job) == (True, existing), status
    delayed = await put(harness, idempotency_key="k-delayed", delay=30)
    again = build(harness, idempotency_key="k-delayed")
    result = await harness.store.put(again.job, again.fingerprint)
    assert (result.duplicate, result.job) == (True, delayed)
    assert len(await list_ids(harness)) == len(STATUSES) + 1


# Another tenant is another scope, not a conflict: see test_tenants.py.
CONFLICTS = [("other.job", {"a": 1}), ("conformance.job", {"a": 2}), ("conformance.job", None)]


async def test_same_key_with_another_name_or_payload_conflicts(harness: Harness) -> None:
    first = await put(harness, payload={"a": 1}, idempotency_key="k", tenant="t1")
    for name, payload in CONFLICTS:
        other = build(harness, name, payload, idempotency_key="k", tenant="t1")
        with pytest.raises(JobIdempotencyConflictError) as caught:
            await harness.store.put(other.job, other.fingerprint)
        assert (caught.value.code, caught.value.key) == ("idempotency_conflict", "k")
        assert caught.value.existing_job_id == first.id
    assert await list_ids(harness) == [first.id]


async def test_keys_are_scoped_per_queue_and_no_key_is_never_a_duplicate(
    harness: Harness,
) -> None:
    first = await put(harness, idempotency_key="k")
    second = await put(harness, idempotency_key="k", queue="other")
    assert first.id != second.id
    assert (first.queue, second.queue) == ("default", "other")
    unkeyed = [await put(harness, payload={"a": 1}) for _ in range(2)]
    assert unkeyed[0].id != unkeyed[1].id


# -- put_many ---------------------------------------------------------------------------


async def test_put_many_writes_in_order(harness: Harness) -> None:
    items = [build(harness, payload=i, at=harness.now() + i / 1000) for i in range(3)]
    results = await harness.store.put_many([(p.job, p.fingerprint) for p in items])
    assert [(r.duplicate, r.job.payload) for r in results] == [(False, 0), (False, 1), (False, 2)]
    assert await list_ids(harness) == [r.job.id for r in results]
    for result in results:
        assert await get(harness, result.job.id) == result.job


async def test_put_many_resolves_repeated_keys_in_order(harness: Harness) -> None:
    items = [
        build(harness, payload="x", idempotency_key="k"),
        build(harness, payload="y"),
        build(harness, payload="x", idempotency_key="k", priority=3),
    ]
    results = await harness.store.put_many([(p.job, p.fingerprint) for p in items])
    assert [r.duplicate for r in results] == [False, False, True]
    assert results[2].job == results[0].job


async def test_put_many_stops_at_a_conflict_with_the_written_results(harness: Harness) -> None:
    now = harness.now()
    items = [
        build(harness, payload="x", idempotency_key="k", at=now),
        build(harness, payload="y", at=now + 0.001),
        build(harness, payload="z", idempotency_key="k", at=now + 0.002),
        build(harness, payload="w", at=now + 0.003),
    ]
    with pytest.raises(JobBatchError) as caught:
        await harness.store.put_many([(p.job, p.fingerprint) for p in items])
    written = caught.value.results
    assert [(r.duplicate, r.job.payload) for r in written] == [(False, "x"), (False, "y")]
    cause = caught.value.__cause__
    assert isinstance(cause, JobIdempotencyConflictError)
    assert cause.existing_job_id == written[0].job.id
    assert await list_ids(harness) == [r.job.id for r in written]
