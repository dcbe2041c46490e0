"""``enqueue(group=...)``: validated before anything is written, kept on the record.

A tenant's job is grouped within its tenant (``tenant`` or ``{tenant}/...``): the rest of
the tests are in ``test_tenants.py``.

On ``MemoryJobStore`` a group is informational: claims keep their priority order.
"""

from __future__ import annotations

import pytest

from sqsjobs import (
    EnqueueRequest,
    Job,
    JobConfigError,
    JobQueue,
    JobWorker,
    MemoryJobStore,
    SyncJobQueue,
)

BAD = ["", "a b", "ü-group", "x" * 129, "line\n", 7, b"bytes"]


@pytest.mark.parametrize("group", BAD, ids=repr)
async def test_bad_groups_are_refused_naming_the_grammar(group: object) -> None:
    store = MemoryJobStore()
    queue = JobQueue(store)
    with pytest.raises(JobConfigError) as caught:
        await queue.enqueue("a", group=group)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_option"
    assert "must match [a-zA-Z0-9._:/@-]{1,128}" in str(caught.value)
    with pytest.raises(JobConfigError):
        await queue.enqueue_many([EnqueueRequest("a"), EnqueueRequest("b", group=group)])  # type: ignore[arg-type]
    assert (await queue.list()).jobs == []


def test_the_default_group_is_the_tenant_else_the_queue() -> None:
    queue = SyncJobQueue(MemoryJobStore())
    assert queue.enqueue("a").job.group == "queue:default"
    assert queue.enqueue("a", queue="mails").job.group == "queue:mails"
    # a tenant named like the queue has a group of its own, not the untenanted jobs'
    assert queue.enqueue("a", tenant="default").job.group == "default"
    assert queue.enqueue("a", tenant="acme").job.group == "acme"
    chosen = queue.enqueue("a", tenant="acme", group="acme/orders:42").job
    assert chosen.group == "acme/orders:42"
    assert queue.get(chosen.id) == chosen
    assert Job.model_validate_json(chosen.model_dump_json()) == chosen
    assert queue.enqueue("a", group="g@1").job.group == "g@1"  # no tenant: as given
    assert queue.for_tenant("globex").enqueue("a", group="g@1").job.group == "globex/g@1"


async def test_tenant_views_pass_the_group_on_within_their_tenant() -> None:
    queue = JobQueue(MemoryJobStore())
    job = (await queue.for_tenant("acme").enqueue("a", group="ledger.1")).job
    assert (job.tenant, job.group) == ("acme", "acme/ledger.1")


async def test_memory_claims_keep_priority_order_whatever_the_group() -> None:
    store = MemoryJobStore()
    queue = JobQueue(store)
    ran: list[int] = []
    await queue.enqueue("a", {"n": 1}, group="g")
    await queue.enqueue("a", {"n": 2}, group="g", priority=5)
    worker = JobWorker(queue, {"a": lambda ctx: ran.append(ctx.payload["n"])})
    assert await worker.run_once() and await worker.run_once()
    assert ran == [2, 1]
