"""``enqueue_in_transaction`` on the emulator: an application's order row and balance
update commit with the jobs' records, or nothing does; messages go after the commit, and
a producer killed between the two still gets its job run."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sqsjobs import (
    EnqueueRequest,
    JobConfigError,
    JobIdempotencyConflictError,
    JobQueue,
    JobStatus,
    JobTransactionError,
    JobWorker,
    MemoryJobStore,
    SyncJobQueue,
)
from sqsjobs.aws import SqsJobStore

from .conftest import depth

ROOT = Path(__file__).parents[2]


@pytest.fixture
def orders(dynamodb: Any) -> Iterator[str]:
    """The application's own table: orders and account balances, keyed by ``pk``."""
    name = f"orders-{uuid.uuid4().hex[:10]}"
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.put_item(TableName=name, Item={"pk": {"S": "account#7"}, "balance": {"N": "5000"}})
    yield name
    dynamodb.delete_table(TableName=name)


def order_items(table: str, order: str, cents: int) -> list[dict[str, Any]]:
    """A new order row and the balance it draws on, both conditional, as an app writes them."""
    return [
        {
            "Put": {
                "TableName": table,
                "Item": {"pk": {"S": f"order#{order}"}, "cents": {"N": str(cents)}},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {
            "Update": {
                "TableName": table,
                "Key": {"pk": {"S": "account#7"}},
                "UpdateExpression": "SET balance = balance - :cents",
                "ConditionExpression": "balance >= :cents",
                "ExpressionAttributeValues": {":cents": {"N": str(cents)}},
            }
        },
    ]


def jobs_for(order: str, **options: Any) -> list[EnqueueRequest]:
    return [
        EnqueueRequest("order.confirm", {"order": order, "to": "zoë@example.org"}, **options),
        EnqueueRequest("invoice.render", {"order": order, "kunde": "Jörg Müller"}, queue="other"),
    ]


def balance(dynamodb: Any, table: str) -> int:
    item = dynamodb.get_item(TableName=table, Key={"pk": {"S": "account#7"}}, ConsistentRead=True)
    return int(item["Item"]["balance"]["N"])


def has_order(dynamodb: Any, table: str, order: str) -> bool:
    key = {"pk": {"S": f"order#{order}"}}
    return "Item" in dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True)


def job_records(dynamodb: Any, store: SqsJobStore) -> int:
    pages = dynamodb.get_paginator("scan").paginate(TableName=store.table_name)
    return sum(
        1 for page in pages for item in page["Items"] if str(item["pk"]["S"]).startswith("job#")
    )


async def test_an_order_and_two_jobs_commit_together_and_then_run(
    store: SqsJobStore, dynamodb: Any, sqs: Any, orders: str
) -> None:
    queue = JobQueue(store)
    results = await queue.enqueue_in_transaction(
        jobs_for("A-1001"), order_items(orders, "A-1001", 1999)
    )
    assert [r.duplicate for r in results] == [False, False]
    assert has_order(dynamodb, orders, "A-1001") and balance(dynamodb, orders) == 5000 - 1999
    for result, url in zip(results, store.queue_urls.values(), strict=True):
        assert depth(sqs, url) == 1  # sent after the commit, one per job
        record = await queue.get(result.job.id)
        assert record is not None and record.status is JobStatus.QUEUED
    ran: list[str] = []
    handlers = {
        "order.confirm": lambda payload: ran.append(payload["to"]),
        "invoice.render": lambda payload: ran.append(payload["kunde"]),
    }
    async with JobWorker(queue, handlers, queues=["default", "other"]):
        deadline = time.monotonic() + 30
        while len(ran) < 2:
            assert time.monotonic() < deadline, ran
            await asyncio.sleep(0.05)
    assert sorted(ran) == ["Jörg Müller", "zoë@example.org"]


def test_a_failed_condition_writes_neither_the_order_nor_the_jobs(
    store: SqsJobStore, dynamodb: Any, sqs: Any, orders: str
) -> None:
    queue = SyncJobQueue(store)
    before = job_records(dynamodb, store)
    with pytest.raises(JobTransactionError) as refused:
        queue.enqueue_in_transaction(jobs_for("A-1002"), order_items(orders, "A-1002", 7500))
    error = refused.value
    assert [r["Code"] for r in error.item_reasons] == ["None", "ConditionalCheckFailed"]
    assert len(error.reasons) == 4  # two items, then the two jobs' records
    assert "item 1: ConditionalCheckFailed" in str(error) and not error.retryable
    assert not has_order(dynamodb, orders, "A-1002") and balance(dynamodb, orders) == 5000
    assert job_records(dynamodb, store) == before
    assert [depth(sqs, url) for url in store.queue_urls.values()] == [0, 0]


def test_a_held_key_is_the_job_and_the_next_order_still_commits(
    store: SqsJobStore, dynamodb: Any, sqs: Any, orders: str
) -> None:
    queue = SyncJobQueue(store)
    keyed = jobs_for("A-1003", idempotency_key="confirm/A-1003")
    first = queue.enqueue_in_transaction(keyed, order_items(orders, "A-1003", 100))
    # A retry of the same request with a further order row: the key's job is the one there.
    again = queue.enqueue_in_transaction(keyed[:1], order_items(orders, "A-1004", 200))
    assert [(r.job.id, r.duplicate) for r in again] == [(first[0].job.id, True)]
    assert has_order(dynamodb, orders, "A-1004") and balance(dynamodb, orders) == 5000 - 300
    assert depth(sqs, store.queue_urls["default"]) == 1  # no second message for the key
    other = [EnqueueRequest("order.confirm", {"order": "B-1"}, idempotency_key="confirm/A-1003")]
    with pytest.raises(JobIdempotencyConflictError):
        queue.enqueue_in_transaction(other, order_items(orders, "A-1005", 300))
    assert not has_order(dynamodb, orders, "A-1005") and balance(dynamodb, orders) == 4700


async def test_one_key_twice_in_a_call_is_one_job_and_a_long_payload_goes_with_it(
    store: SqsJobStore, dynamodb: Any, orders: str
) -> None:
    # Near the 64 KiB limit and incompressible: the payload goes to a body item of its own.
    report = {"rows": [f"Überweisung {secrets.token_hex(90)}" for _ in range(320)]}
    requests = [
        EnqueueRequest("report.mail", report, idempotency_key="report/2026-11"),
        EnqueueRequest("report.mail", report, idempotency_key="report/2026-11"),
    ]
    queue = JobQueue(store)
    results = await queue.enqueue_in_transaction(requests, order_items(orders, "A-1006", 1))
    assert [r.duplicate for r in results] == [False, True]
    assert results[0].job.id == results[1].job.id
    record = await queue.get(results[0].job.id)
    assert record is not None and record.payload == report
    bodies = dynamodb.scan(TableName=store.table_name)["Items"]
    assert any(str(item["pk"]["S"]).startswith("body#") for item in bodies)


def test_a_tenants_view_binds_its_requests(store: SqsJobStore, orders: str) -> None:
    acme = SyncJobQueue(store).for_tenant("acme")
    [result] = acme.enqueue_in_transaction(
        [EnqueueRequest("order.confirm", {"order": "A-1007"})], order_items(orders, "A-1007", 1)
    )
    assert result.job.tenant == "acme"
    with pytest.raises(JobConfigError, match=r"enqueue_in_transaction\(\) item 0"):
        acme.enqueue_in_transaction([EnqueueRequest("x", tenant="globex")], [])


@pytest.mark.parametrize(
    ("items", "said"),
    [
        ({"Put": {}}, "a list of TransactWriteItems entries"),
        ([{"Put": {}, "Delete": {}}], "item 0: an entry has exactly one of"),
        (["Put"], "item 0: an entry has exactly one of"),
        ([{"Upsert": {}}], "ConditionCheck, Delete, Put, Update"),
        ([{"ConditionCheck": {}}] * 99, "99 items and 2 jobs; DynamoDB takes at most 100"),
    ],
)
def test_items_that_are_no_transaction_entries_are_refused_before_anything_is_written(
    store: SqsJobStore, dynamodb: Any, items: Any, said: str
) -> None:
    before = job_records(dynamodb, store)
    with pytest.raises(JobConfigError, match=said):
        SyncJobQueue(store).enqueue_in_transaction(jobs_for("A-1"), items)
    assert job_records(dynamodb, store) == before


async def test_a_job_with_parents_is_refused(store: SqsJobStore) -> None:
    queue = JobQueue(store)
    parent = (await queue.enqueue("order.pack", {"order": "A-2"})).job
    with pytest.raises(JobConfigError, match="waits for parents"):
        await queue.enqueue_in_transaction([EnqueueRequest("x", after=[parent.id])], [])


async def test_the_memory_store_refuses_it_naming_the_store_that_can() -> None:
    store = MemoryJobStore()
    with pytest.raises(JobConfigError, match="needs SqsJobStore"):
        await JobQueue(store).enqueue_in_transaction(jobs_for("A-3"), [])
    with pytest.raises(JobConfigError, match="needs SqsJobStore"):
        SyncJobQueue(store).enqueue_in_transaction(jobs_for("A-3"), [])


# The producer process: commits, then dies by SIGKILL as it is about to send the messages.
KILLED_PRODUCER = """
import json, os, signal, sys
import boto3
from sqsjobs import EnqueueRequest, SyncJobQueue
from sqsjobs.aws import SqsJobStore

config = json.loads(sys.argv[1])
session = boto3.Session()
session.events.register(
    "before-call.sqs.SendMessageBatch", lambda **_: os.kill(os.getpid(), signal.SIGKILL)
)
store = SqsJobStore(table_name=config["table"], queue_urls=config["queues"],
                    endpoint_url=config["endpoint"], session=session)
[result] = SyncJobQueue(store).enqueue_in_transaction(
    [EnqueueRequest("order.confirm", {"order": "A-1010"})], config["items"]
)
print("sent", result.job.id)
"""


async def test_a_producer_killed_between_commit_and_send_still_gets_its_job_run(
    store: SqsJobStore, dynamodb: Any, sqs: Any, orders: str, aws_endpoint: str
) -> None:
    config = {
        "table": store.table_name,
        "queues": dict(store.queue_urls),
        "endpoint": aws_endpoint,
        "items": order_items(orders, "A-1010", 42),
    }
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    env.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", KILLED_PRODUCER, json.dumps(config)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()[-2000:]
    assert has_order(dynamodb, orders, "A-1010")  # committed...
    assert depth(sqs, store.queue_urls["default"]) == 0  # ...and never sent
    queue = JobQueue(store)
    [waiting] = (await queue.list(status="queued")).jobs
    report = await store.reconcile(grace=0)  # the pass a worker or a schedule runs
    assert report.resent == 1
    ran: list[str] = []
    async with JobWorker(queue, {"order.confirm": lambda payload: ran.append(payload["order"])}):
        deadline = time.monotonic() + 30
        while not ran:
            assert time.monotonic() < deadline, "the job never ran"
            await asyncio.sleep(0.05)
    assert ran == ["A-1010"]
    record = await queue.get(waiting.id)
    assert record is not None and record.status is JobStatus.COMPLETED
