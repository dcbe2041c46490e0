"""A claim's visibility is the queue's own setting, read with its description.

A worker's receive asks for the queue's ``VisibilityTimeout``; a claimed job whose lease
needs another visibility costs one change of it, and a job whose lease matches costs
none. A Lambda handler's messages come with the queue's visibility from the event
source mapping, which a claim lengthens for a longer lease but never shortens.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sqsjobs import JobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.flows.claim import Delivery, fitted_visibility
from sqsjobs.aws.wire.protocol import Call, Reply
from sqsjobs.aws.wire.sqs import Message
from sqsjobs.core.models import Job

Send = Callable[[Call], Awaitable[Reply]]


def record_params(store: SqsJobStore) -> list[tuple[str, dict[str, Any]]]:
    """(action, parameters) of every SQS request the store's async face sends."""
    calls: list[tuple[str, dict[str, Any]]] = []
    send: Send = store._send

    async def recording(call: Call) -> Reply:
        if call.service == "sqs":
            calls.append((call.operation, dict(call.params)))
        return await send(call)

    store._send = recording  # type: ignore[method-assign]
    return calls


async def described_store(store: SqsJobStore, sqs: Any, visibility: int) -> SqsJobStore:
    """A store over ``store``'s resources that learns its queues by describing them, with
    the default queue's visibility timeout set to ``visibility``."""
    url = store.queue_urls["default"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": str(visibility)})
    return SqsJobStore(settings=store.settings)


async def test_a_worker_receives_with_the_queue_s_visibility_timeout(
    store: SqsJobStore, sqs: Any
) -> None:
    fresh = await described_store(store, sqs, 45)
    try:
        queue = JobQueue(fresh)
        await queue.enqueue("report", {"month": "2026-11"}, lease=45.0)
        calls = record_params(fresh)
        [claimed] = await fresh.claim("default", "w1", queue.clock(), wait=1.0)
        receives = [params for action, params in calls if action == "receive_message"]
        assert receives and {params["VisibilityTimeout"] for params in receives} == {45}
        changes = [action for action, _ in calls if action.startswith("change_message_vis")]
        assert changes == [], "a lease that matches the queue's visibility needs no change"
        assert claimed.lease == 45.0
    finally:
        await fresh.aclose()


async def test_a_lease_the_queue_s_visibility_does_not_fit_costs_one_change(
    store: SqsJobStore, sqs: Any
) -> None:
    fresh = await described_store(store, sqs, 45)
    try:
        queue = JobQueue(fresh)
        await queue.enqueue("report", {"month": "2026-12"}, lease=12.5)
        calls = record_params(fresh)
        await fresh.claim("default", "w1", queue.clock(), wait=1.0)
        changes = [params for action, params in calls if action.startswith("change_message_vis")]
        assert len(changes) == 1, calls
        [entry] = changes[0]["Entries"]
        assert entry["VisibilityTimeout"] == 13  # whole seconds that cover the lease
    finally:
        await fresh.aclose()


def delivery(lease: float, handle: str) -> Delivery:
    job = Job.model_construct(id=f"job-{handle}", name="report", queue="default", lease=lease)
    return Delivery(job, Message(f"m-{handle}", handle, "{}", 1, 1_764_979_200.25))


def test_a_worker_s_messages_are_fitted_to_their_leases_both_ways() -> None:
    deliveries = [delivery(30.0, "same"), delivery(10.0, "shorter"), delivery(300.0, "longer")]
    assert fitted_visibility(deliveries, 30, event_source=False) == [
        ("shorter", 10),
        ("longer", 300),
    ]


def test_an_event_source_mapping_s_messages_are_only_lengthened() -> None:
    """Lambda wants the queue's visibility at least the function's timeout (6 x it by
    AWS's advice); the handler hands a job back itself by its deadline."""
    deliveries = [delivery(30.0, "short"), delivery(180.0, "same"), delivery(900.0, "long")]
    assert fitted_visibility(deliveries, 180, event_source=True) == [("long", 900)]
