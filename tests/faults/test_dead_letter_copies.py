"""A dead job always ends with its copy in the dead-letter queue.

The copy is sent after the record says dead; a DLQ that refuses it (or a worker that
dies in between) leaves a dead record with no copy, which the DLQ's depth, its alarm and
``dlq list`` would never show. The record stays marked until its copy is confirmed, and
the reconciler sends the copies still owed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import boto3
import pytest

from sqsjobs import JobContext, JobFatalError, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from tests.aws.emulator import unique_prefix

from .conftest import FaultyAws
from .faulty_aws import OBSERVER_CONFIG, Fault, FaultPlan


def poison(ctx: JobContext) -> None:
    raise JobFatalError("Lieferadresse ungültig: 🏠 missing")


@pytest.fixture
async def store(faulty_aws: FaultyAws) -> AsyncIterator[SqsJobStore]:
    made = SqsJobStore.create(
        unique_prefix(), max_receive_count=5, endpoint_url=faulty_aws.endpoint, clock_skew=0.1
    )
    try:
        yield made
    finally:
        await made.aclose()


@pytest.fixture
def observer(faulty_aws: FaultyAws) -> Any:
    return boto3.client("sqs", endpoint_url=faulty_aws.endpoint, config=OBSERVER_CONFIG)


@pytest.fixture
def table(faulty_aws: FaultyAws) -> Any:
    return boto3.client("dynamodb", endpoint_url=faulty_aws.endpoint, config=OBSERVER_CONFIG)


def depth(sqs: Any, url: str) -> int:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return sum(int(attributes[name]) for name in names)


def record(table: Any, store: SqsJobStore, job_id: str) -> dict[str, Any]:
    item: dict[str, Any] = table.get_item(
        TableName=store.table_name, Key={"pk": {"S": f"job#{job_id}"}}, ConsistentRead=True
    )["Item"]
    return item


async def test_a_dead_letter_copy_the_dlq_refused_is_sent_by_the_reconciler(
    store: SqsJobStore, faulty_aws: FaultyAws, observer: Any, table: Any
) -> None:
    queue = JobQueue(store)
    dlq = store.dead_letter_queue_urls["default"]
    job = (await queue.enqueue("order.ship", {"order": 7}, lease=1, max_attempts=1)).job
    refused = FaultPlan(
        rate=1.0,
        kinds=(Fault.DENIED,),
        services=frozenset({"sqs"}),
        actions=frozenset({"SendMessageBatch", "SendMessage"}),
        body_contains=dlq.rsplit("/", 1)[1],
    )
    worker = JobWorker(queue, {"order.ship": poison}, queues=["default"])
    with faulty_aws.injector.faults(refused):
        assert await worker.run_once()
    assert faulty_aws.injector.injected  # the copy was refused
    dead = await queue.get(job.id)
    assert dead is not None and dead.status is JobStatus.DEAD
    item = record(table, store, job.id)
    assert "copy_due" in item and item["phase"]["S"] == "open"
    # Its message came back (it was not deleted without a copy), and the next claim,
    # finding the job dead, let it go: nothing in either queue tells of the death now.
    await asyncio.sleep(1.2)
    assert not await worker.run_once()
    assert depth(observer, dlq) == 0

    assert (await store.reconcile(grace=60.0)).copied == 0  # not owed for long enough yet
    await asyncio.sleep(0.3)
    report = await store.reconcile(grace=0.2)
    assert (report.copied, report.resent, report.dead) == (1, 0, 0)
    assert depth(observer, dlq) == 1
    item = record(table, store, job.id)
    assert "copy_due" not in item and item["phase"]["S"] == "dead"
    assert (await store.reconcile(grace=0.2)).copied == 0  # sent once
    (letter,) = await store.dead_letters("default", limit=10)
    assert letter.job_id == job.id and letter.job is not None
    assert (await queue.list(status=JobStatus.DEAD)).jobs[0].id == job.id


async def test_a_dead_job_whose_copy_went_through_owes_nothing(
    store: SqsJobStore, observer: Any, table: Any
) -> None:
    queue = JobQueue(store)
    job = (await queue.enqueue("order.ship", {"order": 8}, max_attempts=1)).job
    assert await JobWorker(queue, {"order.ship": poison}, queues=["default"]).run_once()
    item = record(table, store, job.id)
    assert "copy_due" not in item and item["phase"]["S"] == "dead"
    assert depth(observer, store.dead_letter_queue_urls["default"]) == 1
    assert (await store.reconcile(grace=0.0)).copied == 0
    assert depth(observer, store.dead_letter_queue_urls["default"]) == 1
