"""Tenant scope of idempotency keys (SPEC §2.4, §6): a key belongs to ``(queue, tenant, key)``.

A tenant reusing another tenant's raw key must get its own job, never a conflict that
names (and so reveals) the other tenant's job id; no tenant is a scope of its own.
"""

from __future__ import annotations

import pytest

from sqsjobs import JobIdempotencyConflictError

from .harness import BOTH_FACES, Harness
from .support import build, get, list_ids, put

pytestmark = BOTH_FACES

KEY = "invoice/7f3a9c41-2026-11"


async def test_another_tenant_reusing_a_key_gets_its_own_job(harness: Harness) -> None:
    acme = await put(harness, payload={"total": 12.5}, idempotency_key=KEY, tenant="acme")
    other = build(harness, payload={"total": 99.0}, idempotency_key=KEY, tenant="globex")
    result = await harness.store.put(other.job, other.fingerprint)
    assert result.duplicate is False
    assert result.job.id != acme.id
    assert (result.job.tenant, result.job.payload) == ("globex", {"total": 99.0})
    assert await get(harness, acme.id) == acme
    assert await get(harness, result.job.id) == result.job
    assert sorted(await list_ids(harness)) == sorted([acme.id, result.job.id])


async def test_no_tenant_is_a_scope_of_its_own(harness: Harness) -> None:
    # "null" and "none" are valid tenant ids: they must not share the no-tenant scope.
    jobs = [
        await put(harness, payload="p", idempotency_key=KEY, tenant=tenant)
        for tenant in (None, "acme", "null", "none")
    ]
    assert len({job.id for job in jobs}) == 4
    assert [job.tenant for job in jobs] == [None, "acme", "null", "none"]
    again = build(harness, payload="p", idempotency_key=KEY)
    result = await harness.store.put(again.job, again.fingerprint)
    assert (result.duplicate, result.job) == (True, jobs[0])


async def test_same_tenant_and_key_is_a_duplicate_or_a_conflict_within_that_tenant(
    harness: Harness,
) -> None:
    acme = await put(harness, payload={"a": 1}, idempotency_key=KEY, tenant="acme")
    globex = await put(harness, payload={"a": 1}, idempotency_key=KEY, tenant="globex")
    for tenant, holder in (("acme", acme), ("globex", globex)):
        again = build(harness, payload={"a": 1}, idempotency_key=KEY, tenant=tenant, priority=4)
        result = await harness.store.put(again.job, again.fingerprint)
        assert (result.duplicate, result.job) == (True, holder)
        changed = build(harness, payload={"a": 2}, idempotency_key=KEY, tenant=tenant)
        with pytest.raises(JobIdempotencyConflictError) as caught:
            await harness.store.put(changed.job, changed.fingerprint)
        assert caught.value.existing_job_id == holder.id
    assert sorted(await list_ids(harness)) == sorted([acme.id, globex.id])


async def test_put_many_scopes_repeated_keys_per_tenant(harness: Harness) -> None:
    now = harness.now()
    items = [
        build(harness, payload="x", idempotency_key=KEY, tenant="acme", at=now),
        build(harness, payload="x", idempotency_key=KEY, tenant="globex", at=now + 0.001),
        build(harness, payload="x", idempotency_key=KEY, at=now + 0.002),
        build(harness, payload="x", idempotency_key=KEY, tenant="globex", at=now + 0.003),
    ]
    results = await harness.store.put_many([(p.job, p.fingerprint) for p in items])
    assert [r.duplicate for r in results] == [False, False, False, True]
    assert [r.job.tenant for r in results] == ["acme", "globex", None, "globex"]
    assert len({r.job.id for r in results[:3]}) == 3
    assert results[3].job == results[1].job
    assert await list_ids(harness) == [r.job.id for r in results[:3]]


async def test_a_tenants_group_naming_another_tenant_is_kept_within_its_own(
    harness: Harness,
) -> None:
    """What a store keeps (and so sends, on SQS) for a tenant's group is in its namespace."""
    acme = await put(harness, payload={"n": 1}, tenant="acme")
    evil = await put(harness, payload={"n": 2}, tenant="evil", group="acme", delay=43_200.5)
    now = harness.now()
    batch = [
        build(harness, payload={"n": 3}, tenant="evil", group="acme/ledger", at=now),
        build(harness, payload={"n": 4}, tenant="acme", group="acme/ledger", at=now + 0.001),
    ]
    results = await harness.store.put_many([(p.job, p.fingerprint) for p in batch])
    assert [(await get(harness, job.id)).group for job in (acme, evil)] == ["acme", "evil/acme"]
    assert [(await get(harness, r.job.id)).group for r in results] == [
        "evil/acme/ledger",
        "acme/ledger",
    ]
