"""Jobs that wait for other jobs (``enqueue(after=[...])``, SPEC §7) on every store.

A job put with parents waits (``waiting``) until each has completed, then becomes queued
(or delayed until its ``run_at``); a parent that ends dead or cancelled cancels it, and
its own children after it. Run through both faces of the producer's calls.
"""

from __future__ import annotations

import pytest

from sqsjobs import Job, JobConfigError, JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.core.fields import unknown_parent
from sqsjobs.core.lifecycle import parent_ended_error

from .harness import BOTH_FACES, Harness
from .support import claim, claim_one, get, list_ids, put, settle

pytestmark = BOTH_FACES

W, Q, C = JobStatus.WAITING, JobStatus.QUEUED, JobStatus.CANCELLED


async def complete(harness: Harness, job_id: str, result: object = None) -> None:
    claimed = await claim_one(harness)
    assert claimed.id == job_id
    assert await harness.store.complete(job_id, claimed.lease_token or "", harness.now(), result)


async def test_a_job_waits_for_its_parent_then_runs(harness: Harness) -> None:
    parent = await put(harness, payload={"step": "extract"})
    child = await put(harness, payload={"step": "load"}, after=[parent.id])
    assert (child.status, child.after) == (W, [parent.id])
    assert (await get(harness, child.id)).status is W
    assert (await get(harness, parent.id)).children == [child.id]
    await complete(harness, parent.id, {"rows": 1200})
    assert (await get(harness, child.id)).status is Q
    assert (await claim_one(harness)).id == child.id


async def test_fan_in_of_fifty_releases_the_child_once(harness: Harness) -> None:
    parents = [await put(harness, payload={"shard": n}) for n in range(50)]
    child = await put(harness, payload={"merge": True}, after=[p.id for p in parents])
    assert {c for p in parents for c in (await get(harness, p.id)).children} == {child.id}
    claimed: list[Job] = []
    for _ in range(50):  # SQS hands out at most ten a receive
        claimed += await claim(harness, limit=50 - len(claimed))
        if len(claimed) == 50:
            break
    assert {job.id for job in claimed} == {p.id for p in parents}
    now = harness.now()
    for job in claimed[:-1]:
        assert await harness.store.complete(job.id, job.lease_token or "", now, job.payload)
    assert (await get(harness, child.id)).status is W
    last = claimed[-1]
    assert await harness.store.complete(last.id, last.lease_token or "", now, last.payload)
    assert (await get(harness, child.id)).status is Q
    [merged] = await claim(harness, limit=10)
    assert (merged.id, merged.attempts) == (child.id, 1)
    assert await claim(harness, limit=10) == []


async def test_a_dead_parent_cancels_its_child_and_grandchild(harness: Harness) -> None:
    parent = await put(harness, max_attempts=1)
    child = await put(harness, after=[parent.id])
    grandchild = await put(harness, after=[child.id])
    await settle(harness, parent, JobStatus.DEAD)
    cancelled_child = await get(harness, child.id)
    assert (cancelled_child.status, cancelled_child.last_error) == (
        C,
        parent_ended_error(parent.id, JobStatus.DEAD),
    )
    cancelled_grandchild = await get(harness, grandchild.id)
    assert (cancelled_grandchild.status, cancelled_grandchild.last_error) == (
        C,
        parent_ended_error(child.id, C),
    )
    assert await claim(harness) == []


async def test_a_cancelled_parent_cancels_its_child(harness: Harness) -> None:
    parent = await put(harness, delay=120)
    child = await put(harness, after=[parent.id])
    assert await harness.store.cancel(parent.id, harness.now())
    assert (await get(harness, child.id)).last_error == parent_ended_error(parent.id, C)


async def test_parents_that_ended_already_settle_the_child_at_once(harness: Harness) -> None:
    done = await put(harness)
    await complete(harness, done.id, "ok")
    ready = await put(harness, after=[done.id])
    assert ready.status is Q
    assert (await claim_one(harness)).id == ready.id
    gone = await put(harness, delay=120)
    assert await harness.store.cancel(gone.id, harness.now())
    doomed = await put(harness, after=[done.id, gone.id])
    assert (doomed.status, doomed.last_error) == (C, parent_ended_error(gone.id, C))


async def test_a_released_child_with_a_later_run_at_is_delayed(harness: Harness) -> None:
    parent = await put(harness)
    child = await put(harness, after=[parent.id], delay=90)
    await complete(harness, parent.id)
    released = await get(harness, child.id)
    assert released.status is JobStatus.DELAYED
    assert released.run_at == child.run_at


async def test_an_unknown_parent_is_refused_before_anything_is_written(harness: Harness) -> None:
    known = await put(harness)
    before = await list_ids(harness)
    with pytest.raises(JobConfigError) as refused:
        await put(harness, after=[known.id, "0f" * 16])
    assert refused.value.code == "invalid_option"
    assert "0f0f" in str(refused.value)
    assert await list_ids(harness) == before


async def test_a_waiting_job_can_be_cancelled_and_listed_as_waiting(harness: Harness) -> None:
    parent = await put(harness, delay=120)
    children = [await put(harness, payload={"n": n}, after=[parent.id]) for n in range(2)]
    assert set(await list_ids(harness, statuses=frozenset({W}))) == {c.id for c in children}
    assert await harness.store.cancel(children[0].id, harness.now())
    assert (await get(harness, children[0].id)).status is C
    assert await list_ids(harness, statuses=frozenset({W})) == [children[1].id]


async def test_a_chain_of_three_hands_each_result_to_the_next(harness: Harness) -> None:
    queue = JobQueue(harness.store, clock=harness.clock)
    seen: dict[str, dict[str, object]] = {}

    async def step(ctx: JobContext) -> int:
        seen[ctx.job.id] = dict(ctx.parent_results)
        return sum(int(str(v)) for v in ctx.parent_results.values()) * 10 + ctx.payload["n"]

    first = (await queue.enqueue("chain.step", {"n": 1})).job
    second = (await queue.enqueue("chain.step", {"n": 2}, after=[first.id])).job
    third = (await queue.enqueue("chain.step", {"n": 3}, after=[second.id])).job
    worker = JobWorker(queue, {"chain.step": step})
    for _ in range(3):
        assert await worker.run_once()
    done = await get(harness, third.id)
    assert (done.status, done.result) == (JobStatus.COMPLETED, 123)
    assert seen == {first.id: {}, second.id: {first.id: 1}, third.id: {second.id: 12}}


async def test_a_tenant_s_job_cannot_wait_for_another_tenant_s(harness: Harness) -> None:
    """Refused as an unknown id, so the answer does not tell the job exists."""
    theirs = await put(harness, tenant="globex-2", delay=120)
    ours = await put(harness, tenant="acme-7", delay=120)
    with pytest.raises(JobConfigError) as refused:
        await put(harness, tenant="acme-7", after=[ours.id, theirs.id])
    assert str(refused.value) == str(unknown_parent(theirs.id))
    child = await put(harness, tenant="acme-7", after=[ours.id])
    assert child.status is W
    untenanted = await put(harness, after=[theirs.id])  # an operator's job may name any
    assert untenanted.status is W
