"""Items under a job's key that are no record: they never hold an id, nor crash a read.

A producer's grant lets it ``UpdateItem`` any ``job#`` key, naming ``resent_at`` and
``updated_at``; without a condition, DynamoDB makes the item if it is missing. Keyed
job ids (an idempotency key's, a cron tick's) are predictable, so such a stub, written
first, would hold the id against every later put: its ``PutItem`` condition refused, the
stub decoded as the holder (``KeyError: 'id'``), and no TTL to end it. A put overwrites
an item that is no record; reads take it for none; an item that is a record but cannot
be read is the store's error, ``JobStoreError``.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from sqsjobs import EnqueueRequest, JobQueue, JobStatus, JobStoreError, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.items import keyed_id
from sqsjobs.cron.keys import tick_key

TICK = 1_796_094_000.0  # a cron tick, on the minute as ticks are


def stub(dynamodb: Any, table: str, job_id: str) -> None:
    """What a producer's grant allows: an unconditional ``UpdateItem`` of the key."""
    now = {"N": repr(time.time())}
    dynamodb.update_item(
        TableName=table,
        Key={"pk": {"S": f"job#{job_id}"}},
        UpdateExpression="SET resent_at = :now, updated_at = :now",
        ExpressionAttributeValues={":now": now},
        ReturnValues="NONE",
    )


def item(dynamodb: Any, table: str, job_id: str) -> dict[str, Any]:
    found: dict[str, Any] = dynamodb.get_item(
        TableName=table, Key={"pk": {"S": f"job#{job_id}"}}, ConsistentRead=True
    )["Item"]
    return found


async def test_a_stub_does_not_hold_a_tenants_idempotency_key(
    store: SqsJobStore, dynamodb: Any
) -> None:
    job_id = keyed_id("default", "acme-eu", "stripe:evt_1Nq8")
    stub(dynamodb, store.table_name, job_id)
    queue = JobQueue(store)
    assert await queue.get(job_id) is None  # no record: no job, and no KeyError
    result = await queue.enqueue(
        "webhook.stripe", {"event": "evt_1Nq8"}, idempotency_key="stripe:evt_1Nq8", tenant="acme-eu"
    )
    assert (result.job.id, result.duplicate) == (job_id, False)
    assert item(dynamodb, store.table_name, job_id)["status"] == {"S": "queued"}
    again = await queue.enqueue(
        "webhook.stripe", {"event": "evt_1Nq8"}, idempotency_key="stripe:evt_1Nq8", tenant="acme-eu"
    )
    assert (again.job.id, again.duplicate) == (job_id, True)
    [claimed] = await store.claim("default", "w", time.time(), wait=1)
    assert claimed.id == job_id and claimed.status is JobStatus.RUNNING


def test_a_stub_does_not_hold_a_cron_tick(store: SqsJobStore, dynamodb: Any) -> None:
    key = tick_key("report.nightly", TICK)
    job_id = keyed_id("default", None, key)
    stub(dynamodb, store.table_name, job_id)
    queue = SyncJobQueue(store)
    [result] = queue.enqueue_many([EnqueueRequest(name="report.nightly", idempotency_key=key)])
    assert (result.job.id, result.duplicate) == (job_id, False)
    found = queue.get(job_id)
    assert found is not None and found.status is JobStatus.QUEUED


async def test_a_record_that_cannot_be_read_is_a_store_error(
    store: SqsJobStore, dynamodb: Any
) -> None:
    job_id = keyed_id("default", None, "order-77")
    dynamodb.put_item(  # a record's status and id, and nothing else it needs
        TableName=store.table_name,
        Item={
            "pk": {"S": f"job#{job_id}"},
            "id": {"S": job_id},
            "status": {"S": "queued"},
            "expires_at": {"N": repr(time.time() + 86_400)},
        },
    )
    queue = JobQueue(store)
    with pytest.raises(JobStoreError) as read:
        await queue.get(job_id)
    with pytest.raises(JobStoreError) as put:
        await queue.enqueue("order.pack", {"n": 77}, idempotency_key="order-77")
    for raised, operation in ((read.value, "GetItem"), (put.value, "PutItem")):
        assert (raised.operation, raised.code, raised.retryable) == (
            operation,
            "UnreadableRecord",
            False,
        )
        assert f"job#{job_id} is no record this release can read" in str(raised)
