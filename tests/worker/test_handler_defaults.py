"""Handler defaults on the producer side: checked at registration, applied where they belong."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel, Field

from sqsjobs import (
    EnqueueRequest,
    Job,
    JobConfigError,
    JobContext,
    JobQueue,
    JobRegistry,
    MemoryJobStore,
    SyncJobQueue,
)

from ..support.clock import FakeClock

INVOICE = "billing.invoice"


def invoice_registry() -> JobRegistry:
    registry = JobRegistry()

    @registry.handler(INVOICE, queue="billing", max_attempts=8, timeout=120, lease=90)
    def invoice(ctx: JobContext) -> None: ...

    registry.add("billing.remind", lambda ctx: None, timeout=timedelta(seconds=20))
    return registry


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"queue": "no spaces"}, "Invalid queue name 'no spaces': must match [a-zA-Z0-9_:-]{1,64}"),
        ({"max_attempts": 0}, "Invalid max_attempts 0: must be an int >= 1"),
        ({"max_attempts": True}, "Invalid max_attempts True: must be an int >= 1"),
        ({"timeout": -1}, "Invalid timeout -1: must be a finite number of seconds >= 0"),
        ({"timeout": math.inf}, "Invalid timeout inf: must be a finite number of seconds"),
        ({"timeout": 8 * 86_400}, "and <= 604800 (7 days)"),
        ({"lease": 0}, "Invalid lease 0: must be a finite number of seconds > 0"),
        ({"lease": 50_000}, "and <= 43200 (SQS's visibility cap)"),
    ],
)
def test_bad_defaults_are_refused_at_registration(options: dict[str, Any], message: str) -> None:
    registry = JobRegistry()
    with pytest.raises(JobConfigError) as decorating:
        registry.handler(INVOICE, **options)
    with pytest.raises(JobConfigError) as adding:
        registry.add(INVOICE, lambda ctx: None, **options)
    for refused in (decorating.value, adding.value):
        assert message in str(refused)
        assert refused.code in ("invalid_option", "invalid_name")
    assert INVOICE not in registry


def test_sync_producer_and_tenant_views_apply_the_handlers_defaults(clock: FakeClock) -> None:
    queue = SyncJobQueue(MemoryJobStore(clock=clock), clock=clock, registry=invoice_registry())
    for producer in (queue, queue.for_tenant("acme")):
        job = producer.enqueue(INVOICE, {"cliente": "Müller GmbH", "total": "1.234,50 €"}).job
        assert (job.queue, job.max_attempts, job.timeout, job.lease) == ("billing", 8, 120.0, 90.0)
    reminder = queue.enqueue("billing.remind", None, tenant="acme").job
    assert (reminder.queue, reminder.max_attempts, reminder.timeout, reminder.lease) == (
        "default",
        5,
        20.0,
        30.0,
    )


async def test_enqueue_many_applies_each_handlers_defaults(clock: FakeClock) -> None:
    queue = JobQueue(MemoryJobStore(clock=clock), clock=clock, registry=invoice_registry())
    results = await queue.for_tenant("globex").enqueue_many(
        [
            EnqueueRequest(INVOICE, {"n": 1}),
            EnqueueRequest(INVOICE, {"n": 2}, queue="urgent", lease=15),
            EnqueueRequest("billing.remind"),
        ]
    )
    assert [(r.job.queue, r.job.lease, r.job.max_attempts) for r in results] == [
        ("billing", 90.0, 8),
        ("urgent", 15.0, 8),
        ("default", 30.0, 5),
    ]


def test_a_handler_registered_after_the_producer_was_built_counts(clock: FakeClock) -> None:
    registry = JobRegistry()
    queue = SyncJobQueue(MemoryJobStore(clock=clock), clock=clock, registry=registry)
    registry.add("late.job", lambda ctx: None, queue="late")
    assert queue.enqueue("late.job").job.queue == "late"
    assert queue.registry is registry


def test_without_the_registry_a_producer_keeps_its_own_defaults(clock: FakeClock) -> None:
    job = SyncJobQueue(MemoryJobStore(clock=clock), clock=clock).enqueue(INVOICE).job
    assert (job.queue, job.max_attempts, job.timeout, job.lease) == ("default", 5, 30.0, 30.0)


def test_registry_must_be_a_job_registry(clock: FakeClock) -> None:
    with pytest.raises(ValueError, match=r"registry must be a JobRegistry .* got dict"):
        JobQueue(MemoryJobStore(clock=clock), registry={INVOICE: lambda ctx: None})  # type: ignore[arg-type]


def test_the_explicit_timeout_mark_stays_out_of_a_jobs_json(clock: FakeClock) -> None:
    queue = SyncJobQueue(MemoryJobStore(clock=clock), clock=clock)
    job = queue.enqueue(INVOICE, {"cliente": "Ñandú S.A."}).job
    assert "timeout_explicit" not in job.model_dump() and "timeout_explicit" not in repr(job)
    assert Job.model_validate_json(job.model_dump_json()) == job
    assert queue.enqueue(INVOICE, timeout=60).job.timeout_explicit


class Order(BaseModel):
    order_id: str
    quantity: int = Field(gt=0)


def order_registry() -> JobRegistry:
    registry = JobRegistry()

    @registry.handler("orders.ship")
    def ship(payload: Order) -> None: ...

    return registry


async def test_a_producer_with_the_registry_refuses_a_name_no_handler_has(clock: FakeClock) -> None:
    store = MemoryJobStore(clock=clock)
    queue = JobQueue(store, clock=clock, registry=order_registry())
    with pytest.raises(JobConfigError) as refused:
        await queue.enqueue("orders.shipp", {"order_id": "A-1", "quantity": 1})
    assert refused.value.code == "invalid_name"
    assert "'orders.shipp' has no handler in this producer's registry" in str(refused.value)
    assert "(handlers: orders.ship)" in str(refused.value)
    assert (await queue.list()).jobs == []


async def test_a_payload_the_handlers_model_refuses_is_refused_before_anything_is_written(
    clock: FakeClock,
) -> None:
    store = MemoryJobStore(clock=clock)
    queue = JobQueue(store, clock=clock, registry=order_registry())
    with pytest.raises(JobConfigError) as refused:
        await queue.enqueue_many(
            [
                EnqueueRequest("orders.ship", {"order_id": "Zürich-7", "quantity": 2}),
                EnqueueRequest("orders.ship", {"order_id": "4111-1111-1111-1111", "quantity": 0}),
            ]
        )
    assert refused.value.code == "invalid_payload"
    message = str(refused.value)
    assert "Payload does not match Order" in message and "quantity" in message
    assert "4111" not in message  # where and how it failed, never what it held
    assert (await queue.list()).jobs == []  # the valid one was not written either
    sync = SyncJobQueue(store, clock=clock, registry=order_registry())
    assert sync.enqueue("orders.ship", {"order_id": "A-2", "quantity": 3}).job.name == "orders.ship"
    with pytest.raises(JobConfigError):
        sync.enqueue("orders.ship", {"quantity": 3})
