"""Jobs that wait for others on SQS and DynamoDB: what each step costs, exactly, and how
the reconciler finishes what a crash cut short (``flows.waiting``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sqsjobs import JobConfigError, JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.protocol import AwsError, Call
from sqsjobs.aws.wire.sqs import body

from .emulator import COUNTER


def requests_of(before: Any) -> dict[tuple[str, str], int]:
    return dict((COUNTER.counts() - before).requests)


async def test_a_child_costs_a_read_a_put_and_a_link_and_no_message(
    store: SqsJobStore,
) -> None:
    queue = JobQueue(store)
    parent = (await queue.enqueue("invoice.render", {"n": 1})).job
    before = COUNTER.counts()
    child = (await queue.enqueue("invoice.mail", {"n": 1}, after=[parent.id])).job
    assert requests_of(before) == {
        ("dynamodb", "BatchGetItem"): 1,  # its parents, consistently
        ("dynamodb", "PutItem"): 1,  # the child, waiting
        ("dynamodb", "UpdateItem"): 1,  # its id among the parent's children
        ("dynamodb", "GetItem"): 1,  # the child as the links left it
    }
    assert child.status is JobStatus.WAITING
    [claimed] = await store.claim("default", "w1", queue.clock())
    before = COUNTER.counts()
    assert await store.complete(parent.id, claimed.lease_token or "", queue.clock(), "pdf")
    assert requests_of(before) == {
        ("dynamodb", "UpdateItem"): 3,  # complete, cross off, release
        ("sqs", "SendMessage"): 1,  # the child's message (no lane: priority 0)
    }
    [next_one] = await store.claim("default", "w1", queue.clock())
    assert (next_one.id, next_one.status) == (child.id, JobStatus.RUNNING)


async def test_stats_count_waiting_jobs(store: SqsJobStore) -> None:
    queue = JobQueue(store)
    parent = (await queue.enqueue("invoice.render", delay=600)).job
    for n in range(3):
        await queue.enqueue("invoice.mail", {"n": n}, after=[parent.id])
    [default] = [q for q in await store.stats() if q.queue == "default"]
    assert (default.counts[JobStatus.WAITING], default.counts[JobStatus.DELAYED]) == (3, 1)


async def test_the_reconciler_releases_a_child_a_crash_left_waiting(
    store: SqsJobStore, dynamodb: Any
) -> None:
    """The parent's ending write happened, its children's settling did not (a killed
    worker): the parent's record says completed, the child still waits for it."""
    queue = JobQueue(store)
    parent = (await queue.enqueue("invoice.render")).job
    child = (await queue.enqueue("invoice.mail", after=[parent.id])).job
    dynamodb.update_item(
        TableName=store.table_name,
        Key={"pk": {"S": f"job#{parent.id}"}},
        UpdateExpression="SET #s = :c",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":c": {"S": "completed"}},
    )
    await asyncio.sleep(0.05)
    report = await store.reconcile(grace=0.01)
    assert report.settled == 1
    released = await queue.get(child.id)
    assert released is not None and released.status is JobStatus.QUEUED
    claimed = await store.claim("default", "w1", queue.clock(), limit=10)
    assert [job.id for job in claimed] == [child.id]  # the parent's message: deleted


async def test_the_reconciler_cancels_a_child_whose_parent_died_unlinked(
    store: SqsJobStore, dynamodb: Any
) -> None:
    """The child's link never reached its parent (a producer killed after the child's
    put): the parent's death cannot tell it, the reconciler does."""
    queue = JobQueue(store)
    parent = (await queue.enqueue("invoice.render", max_attempts=1)).job
    child = (await queue.enqueue("invoice.mail", after=[parent.id])).job
    dynamodb.update_item(
        TableName=store.table_name,
        Key={"pk": {"S": f"job#{parent.id}"}},
        UpdateExpression="REMOVE children",
    )
    [claimed] = await store.claim("default", "w1", queue.clock())
    assert await store.fail(parent.id, claimed.lease_token or "", "E: x", None, queue.clock())
    assert (await queue.get(child.id)).status is JobStatus.WAITING  # type: ignore[union-attr]
    await asyncio.sleep(0.05)
    assert (await store.reconcile(grace=0.01)).settled == 1
    cancelled = await queue.get(child.id)
    assert cancelled is not None and cancelled.status is JobStatus.CANCELLED
    assert cancelled.last_error is not None and parent.id in cancelled.last_error


async def test_a_stray_message_for_a_waiting_job_is_deleted(store: SqsJobStore, sqs: Any) -> None:
    queue = JobQueue(store)
    parent = (await queue.enqueue("invoice.render", delay=600)).job
    child = (await queue.enqueue("invoice.mail", after=[parent.id])).job
    sqs.send_message(QueueUrl=store.queue_urls["default"], MessageBody=body(child.id, "default"))
    assert await store.claim("default", "w1", queue.clock(), wait=1.0) == []
    attributes = sqs.get_queue_attributes(
        QueueUrl=store.queue_urls["default"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    assert attributes == {  # deleted, not hidden (the parent's message is delayed)
        "ApproximateNumberOfMessages": "0",
        "ApproximateNumberOfMessagesNotVisible": "0",
    }
    assert (await queue.get(child.id)).status is JobStatus.WAITING  # type: ignore[union-attr]


async def test_record_format_two_refuses_parents_before_writing(
    aws_endpoint: str, prefix: str
) -> None:
    older = SqsJobStore.create(prefix, endpoint_url=aws_endpoint, record_format=2)
    try:
        queue = JobQueue(older)
        parent = (await queue.enqueue("invoice.render")).job
        with pytest.raises(JobConfigError) as refused:
            await queue.enqueue("invoice.mail", after=[parent.id])
        assert "0.2 releases cannot read" in str(refused.value)
        assert [job.id for job in (await queue.list()).jobs] == [parent.id]
    finally:
        await older.aclose()


async def test_a_child_crossed_off_but_never_released_is_released_by_the_reconciler(
    store: SqsJobStore, dynamodb: Any
) -> None:
    """The worker died between its parent's cross-off and the release: the child waits
    for nobody, and a cross-off repeated now is refused (found by the chains' chaos)."""
    queue = JobQueue(store)
    parent = (await queue.enqueue("invoice.render")).job
    child = (await queue.enqueue("invoice.mail", after=[parent.id])).job
    for job_id, expression in ((parent.id, "SET #s = :c"), (child.id, "REMOVE awaiting")):
        dynamodb.update_item(
            TableName=store.table_name,
            Key={"pk": {"S": f"job#{job_id}"}},
            UpdateExpression=expression,
            **(
                {
                    "ExpressionAttributeNames": {"#s": "status"},
                    "ExpressionAttributeValues": {":c": {"S": "completed"}},
                }
                if job_id == parent.id
                else {}
            ),
        )
    await asyncio.sleep(0.05)
    assert (await store.reconcile(grace=0.01)).settled == 1
    released = await queue.get(child.id)
    assert released is not None and released.status is JobStatus.QUEUED


async def test_a_producer_that_may_not_settle_a_child_leaves_it_to_the_reconciler(
    store: SqsJobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The templates' producer role may link a child to a parent, not cancel the child
    (IAM refuses it): a parent already cancelled makes the enqueue's own settling fail.
    The enqueue still succeeds, the child waits, and the reconciler cancels it."""
    queue = JobQueue(store)
    parent = (await queue.enqueue("invoice.render", {"nr": "RE-2026-0414"}, delay=3600)).job
    assert await queue.cancel(parent.id)
    sent = store._send

    async def as_the_producer_role(call: Call) -> Any:
        key = call.params.get("Key", {}).get("pk", {}).get("S", "")
        if call.operation == "update_item" and key != f"job#{parent.id}":
            error = ClientError({"Error": {"Code": "AccessDeniedException"}}, "UpdateItem")
            raise AwsError("AccessDeniedException", "not authorized", "update_item", error)
        return await sent(call)

    monkeypatch.setattr(store, "_send", as_the_producer_role)
    child = (await queue.enqueue("invoice.mail", {"an": "zoë@example.org"}, after=[parent.id])).job
    assert child.status is JobStatus.WAITING
    monkeypatch.undo()
    report = await store.reconcile(grace=0)
    assert report.settled == 1
    settled = await queue.get(child.id)
    assert settled is not None and settled.status is JobStatus.CANCELLED
    assert settled.last_error is not None and parent.id in settled.last_error
