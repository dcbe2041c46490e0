"""Batches on SQS and DynamoDB: what counting a job's end costs, exactly, and how the
reconciler finishes what a crash left (``flows.batches``)."""

from __future__ import annotations

import asyncio
from typing import Any

from sqsjobs import BatchStatus, EnqueueRequest, JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.flows import batches
from sqsjobs.aws.wire.items import BATCH_COUNTED

from .emulator import COUNTER


def requests_of(before: Any) -> dict[tuple[str, str], int]:
    return dict((COUNTER.counts() - before).requests)


async def test_a_batch_job_s_end_costs_a_transaction_and_a_shard_read(
    store: SqsJobStore,
) -> None:
    queue = JobQueue(store)
    batch = await queue.batch(
        [EnqueueRequest("invoice.render", {"n": n}) for n in range(3)],
        on_complete=EnqueueRequest("invoice.summary", queue="other"),
    )
    claimed = await store.claim("default", "w1", queue.clock(), limit=3)
    assert sorted(job.id for job in claimed) == sorted(batch.job_ids)
    first, *others = claimed
    before = COUNTER.counts()
    assert await store.complete(first.id, first.lease_token or "", queue.clock(), "ok")
    assert requests_of(before) == {
        ("dynamodb", "UpdateItem"): 1,  # the completion
        ("dynamodb", "TransactWriteItems"): 1,  # its end counted, with its mark
        ("dynamodb", "GetItem"): 1,  # the shard: not all ended yet
    }
    for job in others:
        assert await store.complete(job.id, job.lease_token or "", queue.clock(), "ok")
    [callback] = batch.callback_ids
    released = await queue.get(callback)
    assert released is not None and released.status is JobStatus.QUEUED
    assert await queue.batch_status(batch.id) == BatchStatus(
        batch.id, 3, 3, 0, 0, 0, batch.callback_ids
    )


async def test_a_count_tried_again_counts_once(store: SqsJobStore, dynamodb: Any) -> None:
    """An ending write tried again (an outcome's retry after a failure) counts again: the
    transaction's condition on the job's mark refuses the second count."""
    queue = JobQueue(store)
    batch = await queue.batch([EnqueueRequest("invoice.render", {"n": n}) for n in range(2)])
    [job, _] = await store.claim("default", "w1", queue.clock(), limit=2)
    assert await store.complete(job.id, job.lease_token or "", queue.clock(), "ok")
    item = dynamodb.get_item(
        TableName=store.table_name, Key={"pk": {"S": f"job#{job.id}"}}, ConsistentRead=True
    )["Item"]
    assert item.pop(BATCH_COUNTED) == {"S": "completed"}
    before = COUNTER.counts()
    store.sync._state.run_sync(batches.ended(store.sync._state.layout, item, queue.clock()))
    assert requests_of(before) == {("dynamodb", "TransactWriteItems"): 1}  # refused
    status = await queue.batch_status(batch.id)
    assert status is not None and (status.completed, status.open) == (1, 1)


async def test_the_reconciler_counts_an_end_a_crash_left_uncounted(
    store: SqsJobStore, dynamodb: Any
) -> None:
    """The job's completion was written, its count never was (a killed worker)."""
    queue = JobQueue(store)
    batch = await queue.batch(
        [EnqueueRequest("invoice.render")],
        on_complete=EnqueueRequest("invoice.summary", queue="other"),
    )
    [member] = batch.job_ids
    dynamodb.update_item(
        TableName=store.table_name,
        Key={"pk": {"S": f"job#{member}"}},
        UpdateExpression="SET #s = :c",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":c": {"S": "completed"}},
    )
    status = await queue.batch_status(batch.id)
    assert status is not None and status.open == 1  # uncounted
    await asyncio.sleep(0.05)
    report = await store.reconcile(grace=0.01)
    assert report.settled >= 1
    assert await queue.batch_status(batch.id) == BatchStatus(
        batch.id, 1, 1, 0, 0, 0, batch.callback_ids
    )
    released = await queue.get(batch.callback_ids[0])
    assert released is not None and released.status is JobStatus.QUEUED
    assert (await store.reconcile(grace=0.01)).settled == 0  # closed: nothing left to do
