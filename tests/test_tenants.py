"""Tenant-bound views, ``JobQueue.for_tenant`` and ``SyncJobQueue.for_tenant`` (SPEC §6).

A view enqueues for its tenant only and cannot read, cancel or list another tenant's
jobs, so code handed a view for tenant A cannot reach tenant B through it.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

import pytest

from sqsjobs import (
    EnqueueRequest,
    JobConfigError,
    JobQueue,
    JobStatus,
    MemoryJobStore,
    SyncJobQueue,
    SyncTenantJobQueue,
    TenantJobQueue,
)

from .support.clock import REALISTIC_START, FakeClock
from .test_queue import call

T = REALISTIC_START
Queue = JobQueue | SyncJobQueue
KEY = "invoice/7f3a9c41-2026-11"


@pytest.fixture
def store(clock: FakeClock) -> MemoryJobStore:
    return MemoryJobStore(clock=clock)


@pytest.fixture(params=[JobQueue, SyncJobQueue], ids=["async", "sync"])
def queue(request: pytest.FixtureRequest, store: MemoryJobStore, clock: FakeClock) -> Queue:
    cls: type[Queue] = request.param
    return cls(
        store, clock=clock, default_queue="billing", default_max_attempts=4, default_lease=12.5
    )


async def ids(page: Any) -> list[str]:
    return [job.id for job in (await call(page)).jobs]


# -- for_tenant -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tenant", ["Acme", "", "-acme", "acme-", "a" * 64, "acme\n", "zoë", None, 7]
)
def test_for_tenant_refuses_an_invalid_tenant_at_once(queue: Queue, tenant: Any) -> None:
    with pytest.raises(JobConfigError) as caught:
        queue.for_tenant(tenant)
    assert caught.value.code == "invalid_option"
    assert "tenant" in str(caught.value)


def test_a_view_has_its_facades_methods_async_or_blocking(queue: Queue) -> None:
    view = queue.for_tenant("acme")
    assert view.tenant == "acme"
    # The view types are public, so callers can annotate what they hand around.
    assert type(view) is (TenantJobQueue if isinstance(queue, JobQueue) else SyncTenantJobQueue)
    for method in ("enqueue", "enqueue_many", "get", "cancel", "list"):
        facade_async = inspect.iscoroutinefunction(getattr(queue, method))
        assert inspect.iscoroutinefunction(getattr(view, method)) is facade_async, method


@pytest.mark.parametrize("method", ["enqueue", "enqueue_many", "get", "cancel", "list"])
def test_a_views_methods_take_the_facades_arguments(queue: Queue, method: str) -> None:
    """An option added to the façade and not to the views fails here, not in a user's call."""

    def shape(function: Any) -> list[tuple[str, Any, Any]]:
        return [
            (p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()
        ]

    assert shape(getattr(queue.for_tenant("acme"), method)) == shape(getattr(queue, method))


# -- enqueue ----------------------------------------------------------------------------


async def test_a_view_enqueues_for_its_tenant_with_the_queues_defaults(
    queue: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    view = queue.for_tenant("acme")
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        result = await call(view.enqueue("invoice.send", {"to": "zoë@acme.example"}))
    job = result.job
    assert (result.duplicate, job.tenant, job.queue) == (False, "acme", "billing")
    assert (job.max_attempts, job.lease, job.payload) == (4, 12.5, {"to": "zoë@acme.example"})
    assert await call(queue.get(job.id)) == job
    assert [getattr(r, "job_id", None) for r in caplog.records] == [job.id]
    own = await call(view.enqueue("invoice.send", tenant="acme", queue="other", priority=3))
    assert (own.job.tenant, own.job.queue, own.job.priority) == ("acme", "other", 3)


async def test_a_view_refuses_another_tenant_before_writing(queue: Queue) -> None:
    view = queue.for_tenant("acme")
    for other in ("globex", "ACME"):
        with pytest.raises(JobConfigError) as caught:
            await call(view.enqueue("invoice.send", tenant=other, idempotency_key=KEY))
        assert caught.value.code == "invalid_option"
        assert repr(other) in str(caught.value) and "'acme'" in str(caught.value)
    assert await ids(queue.list()) == []


async def test_enqueue_many_binds_every_request_to_the_views_tenant(queue: Queue) -> None:
    view = queue.for_tenant("globex")
    results = await call(
        view.enqueue_many(
            [
                EnqueueRequest("invoice.send", {"n": 1}),
                EnqueueRequest("invoice.send", {"n": 2}, tenant="globex", queue="other"),
                EnqueueRequest("invoice.send", {"n": 1}, idempotency_key=KEY),
            ]
        )
    )
    assert [(r.job.tenant, r.job.payload, r.duplicate) for r in results] == [
        ("globex", {"n": 1}, False),
        ("globex", {"n": 2}, False),
        ("globex", {"n": 1}, False),
    ]


async def test_enqueue_many_checks_every_request_before_writing_any(queue: Queue) -> None:
    view = queue.for_tenant("globex")
    requests = [EnqueueRequest("invoice.send", {"n": n}) for n in range(3)]
    with pytest.raises(JobConfigError) as caught:
        await call(view.enqueue_many([*requests, EnqueueRequest("invoice.send", tenant="acme")]))
    assert caught.value.code == "invalid_option"
    assert "3" in str(caught.value) and "'acme'" in str(caught.value)
    with pytest.raises(JobConfigError) as caught:
        await call(view.enqueue_many([*requests, "invoice.send"]))  # type: ignore[list-item]
    assert caught.value.code == "invalid_option"
    assert await ids(queue.list()) == []


# -- isolation between tenants ----------------------------------------------------------


async def test_another_tenant_reusing_a_key_gets_its_own_job_and_cannot_reach_the_first(
    queue: Queue,
) -> None:
    acme, globex = queue.for_tenant("acme"), queue.for_tenant("globex")
    first = await call(acme.enqueue("invoice.send", {"total": 12.5}, idempotency_key=KEY))
    second = await call(globex.enqueue("invoice.send", {"total": 99.0}, idempotency_key=KEY))
    assert second.duplicate is False
    assert second.job.id != first.job.id
    assert await call(globex.get(first.job.id)) is None
    assert await call(globex.cancel(first.job.id)) is False
    assert (await call(acme.get(first.job.id))).status is JobStatus.QUEUED
    again = await call(acme.enqueue("invoice.send", {"total": 12.5}, idempotency_key=KEY))
    assert (again.duplicate, again.job.id) == (True, first.job.id)


async def test_a_view_cannot_read_or_cancel_jobs_without_a_tenant(
    queue: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    shared = (await call(queue.enqueue("report.build", {"month": "2026-11"}))).job
    view = queue.for_tenant("acme")
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await call(view.get(shared.id)) is None
        assert await call(view.cancel(shared.id)) is False
        assert await call(view.cancel("0" * 32)) is False
    assert caplog.records == []
    assert (await call(queue.get(shared.id))).status is JobStatus.QUEUED


async def test_a_view_cancels_its_own_job(queue: Queue, clock: FakeClock) -> None:
    view = queue.for_tenant("initech")
    job = (await call(view.enqueue("invoice.send", delay=90.25))).job
    clock.advance(1.0000003)
    assert await call(view.cancel(job.id)) is True
    cancelled = await call(view.get(job.id))
    assert cancelled.status is JobStatus.CANCELLED
    assert await call(view.cancel(job.id)) is False


async def test_a_view_lists_only_its_tenant(queue: Queue, clock: FakeClock) -> None:
    acme = queue.for_tenant("acme")
    mine = []
    for n, tenant in enumerate(["acme", "globex", None, "acme", "initech", "acme"]):
        result = await call(
            queue.enqueue(
                "invoice.send", {"n": n}, tenant=tenant, queue="other" if n == 5 else None
            )
        )
        if tenant == "acme":
            mine.append(result.job.id)
        clock.advance(0.0173)
    assert await ids(acme.list()) == mine
    assert await ids(acme.list(tenant="acme")) == mine
    assert await ids(acme.list(queue="other")) == mine[2:]
    first = await call(acme.list(limit=2))
    assert [j.id for j in first.jobs] == mine[:2]
    assert await ids(acme.list(limit=2, cursor=first.next_cursor)) == mine[2:]
    with pytest.raises(JobConfigError) as caught:
        await call(acme.list(tenant="globex"))
    assert caught.value.code == "invalid_option"
    assert "'globex'" in str(caught.value) and "'acme'" in str(caught.value)


# -- message groups ---------------------------------------------------------------------


async def test_a_views_group_is_within_its_tenant_and_never_another_tenants(
    queue: Queue,
) -> None:
    """Tenant ids hold no "/", so ``evil/...`` can never be ``acme`` nor start ``acme/``."""
    acme, evil = queue.for_tenant("acme"), queue.for_tenant("evil")
    own = (await call(acme.enqueue("invoice.send", {"n": 1}))).job
    chosen = (await call(acme.enqueue("invoice.send", {"n": 2}, group="orders:42"))).job
    forged = [
        (await call(evil.enqueue("invoice.send", {"n": 3}, group=group, delay=43_200.25))).job
        for group in ("acme", "acme/orders:42", "billing")
    ]
    assert (own.group, chosen.group) == ("acme", "acme/orders:42")
    assert [job.group for job in forged] == ["evil/acme", "evil/acme/orders:42", "evil/billing"]
    for job in forged:
        assert job.group is not None
        assert job.group != "acme" and not job.group.startswith("acme/")
        assert (await call(queue.get(job.id))).group == job.group  # what the record keeps


async def test_enqueue_many_confines_each_requests_group_to_the_views_tenant(
    queue: Queue,
) -> None:
    results = await call(
        queue.for_tenant("evil").enqueue_many(
            [
                EnqueueRequest("invoice.send", {"n": 1}, group="acme"),
                EnqueueRequest("invoice.send", {"n": 2}),
                EnqueueRequest("invoice.send", {"n": 3}, group="evil/ledger", tenant="evil"),
            ]
        )
    )
    assert [r.job.group for r in results] == ["evil/acme", "evil", "evil/ledger"]


async def test_a_tenants_group_read_back_names_the_same_group_again(queue: Queue) -> None:
    """``Job.group`` is the group as stored: passing it again joins that group, not a new one."""
    view = queue.for_tenant("initech")
    first = (await call(view.enqueue("invoice.send", group="ledger"))).job
    again = (await call(view.enqueue("invoice.send", group=first.group))).job
    default = (await call(view.enqueue("invoice.send", group="initech"))).job
    assert first.group == again.group == "initech/ledger"
    assert default.group == "initech"  # the tenant's own default group, named


async def test_a_tenants_group_must_fit_128_characters_with_its_prefix(queue: Queue) -> None:
    tenant = "acme-7"
    view = queue.for_tenant(tenant)
    longest = "g" * (128 - len(tenant) - 1)
    assert (await call(view.enqueue("invoice.send", group=longest))).job.group == (
        f"{tenant}/{longest}"
    )
    with pytest.raises(JobConfigError) as caught:
        await call(view.enqueue("invoice.send", group=longest + "g"))
    assert caught.value.code == "invalid_option"
    message = str(caught.value)
    assert "'acme-7/<group>'" in message and "128" in message and "121" in message
    with pytest.raises(JobConfigError):
        await call(view.enqueue_many([EnqueueRequest("a"), EnqueueRequest("b", group="x" * 125)]))
    assert len(await ids(queue.list())) == 1


async def test_the_facade_confines_a_tenants_group_as_its_view_does(queue: Queue) -> None:
    """Same tenant, same group: the same message group whichever producer enqueued it."""
    through_view = (await call(queue.for_tenant("evil").enqueue("a", group="acme"))).job
    direct = (await call(queue.enqueue("a", tenant="evil", group="acme"))).job
    shared = (await call(queue.enqueue("a", group="acme"))).job  # no tenant: the operator's
    assert through_view.group == direct.group == "evil/acme"
    assert shared.group == "acme"
