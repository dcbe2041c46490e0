"""SQS's own DLQ redrive (the console's "Start DLQ redrive", ``StartMessageMoveTask``)
runs a dead job again when the message it moves back is the store's copy of that death,
and is refused loudly otherwise: a forged or foreign message revives nothing.

moto does not implement ``StartMessageMoveTask`` (EMULATOR-NOTES), so ``move_back`` does
what AWS documents the task does: each DLQ message becomes a new message on the source
queue with the same body and message attributes, and leaves the DLQ.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from sqsjobs import JobContext, JobFatalError, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.flows.moved_back import NO_KEY, NOT_A_COPY, SQS_REDRIVE, WRONG_KEY, moved_back
from sqsjobs.aws.wire import sqs as wire_sqs
from sqsjobs.aws.wire.copy_marks import copy_mark, new_key
from sqsjobs.aws.wire.items import Stored, stored_from_item
from sqsjobs.aws.wire.protocol import drive

from .conftest import SKEW, depth
from .fakes import NOW, FakeAws, layout, message, prepared, stored

pytestmark = pytest.mark.timeout(60)
MOVED_BACK = "jobs.moved_back"


class Warehouse:
    """A handler that refuses every order while the warehouse is closed, then ships them."""

    def __init__(self) -> None:
        self.closed = True
        self.shipped: list[str] = []

    def ship(self, ctx: JobContext) -> str:
        if self.closed:
            raise JobFatalError("Lager geschlossen: Größe unbekannt")
        self.shipped.append(ctx.job.id)
        return "shipped"


def move_back(sqs: Any, dlq: str, source: str) -> int:
    """Move every DLQ message to ``source`` as SQS's message move task does; how many."""
    moved = 0
    while True:
        reply = sqs.receive_message(
            QueueUrl=dlq, MaxNumberOfMessages=10, MessageAttributeNames=["All"], WaitTimeSeconds=0
        )
        messages = reply.get("Messages", [])
        if not messages:
            return moved
        for raw in messages:
            attributes = raw.get("MessageAttributes")
            extra = {"MessageAttributes": attributes} if attributes else {}
            sqs.send_message(QueueUrl=source, MessageBody=raw["Body"], **extra)
            sqs.delete_message(QueueUrl=dlq, ReceiptHandle=raw["ReceiptHandle"])
            moved += 1


async def until(predicate: Callable[[], Awaitable[bool]], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


async def status_is(queue: JobQueue, job_id: str, status: JobStatus) -> bool:
    job = await queue.get(job_id)
    return job is not None and job.status is status


@contextlib.asynccontextmanager
async def serving(queue: JobQueue, warehouse: Warehouse) -> AsyncIterator[None]:
    """A worker running the warehouse's handler for as long as the block lasts."""
    worker = JobWorker(queue, {"order.ship": warehouse.ship}, queues=["default"])
    worker.start()
    try:
        yield
    finally:
        await worker.stop(grace=2.0)


async def dead_job(store: SqsJobStore, sqs: Any, warehouse: Warehouse) -> tuple[JobQueue, str]:
    """A job that died on its first attempt, its copy in the DLQ, no worker running."""
    queue = JobQueue(store)
    job = (await queue.enqueue("order.ship", {"Bestellung": "ü-7"}, max_attempts=1)).job
    async with serving(queue, warehouse):
        await until(lambda: status_is(queue, job.id, JobStatus.DEAD))
        dlq = store.dead_letter_queue_urls["default"]
        await until(lambda: asyncio.sleep(0, depth(sqs, dlq) == 1))
    return queue, job.id


def moved_back_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "event", "") == MOVED_BACK]


async def test_the_consoles_dlq_redrive_runs_a_dead_job_again(
    store: SqsJobStore, sqs: Any, caplog: pytest.LogCaptureFixture
) -> None:
    warehouse = Warehouse()
    queue, job_id = await dead_job(store, sqs, warehouse)
    dlq, source = store.dead_letter_queue_urls["default"], store.queue_urls["default"]
    warehouse.closed = False
    assert move_back(sqs, dlq, source) == 1
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        async with serving(queue, warehouse):
            await until(lambda: status_is(queue, job_id, JobStatus.COMPLETED))
            await until(lambda: asyncio.sleep(0, depth(sqs, source) == 0))
    job = await queue.get(job_id)
    assert job is not None and job.result == "shipped" and job.attempts == 1
    assert warehouse.shipped == [job_id]
    kinds = [(entry.kind, entry.by) for entry in job.history]
    assert ("redrive", SQS_REDRIVE) in kinds, kinds
    assert job.history[-1].outcome == "completed"
    assert depth(sqs, dlq) == 0
    [said] = moved_back_records(caplog)
    assert said.levelno == logging.INFO and "runs again" in said.getMessage()


@pytest.mark.parametrize(
    ("mark", "why"),
    [
        (copy_mark(new_key()), WRONG_KEY),
        (copy_mark(None), NO_KEY),
        (None, NOT_A_COPY),
    ],
    ids=["a copy with a forged key", "a copy without a key", "an unmarked message"],
)
async def test_a_message_that_is_not_the_stores_copy_revives_nothing(
    store: SqsJobStore,
    sqs: Any,
    caplog: pytest.LogCaptureFixture,
    mark: dict[str, Any] | None,
    why: str,
) -> None:
    warehouse = Warehouse()
    queue, job_id = await dead_job(store, sqs, warehouse)
    dlq, source = store.dead_letter_queue_urls["default"], store.queue_urls["default"]
    warehouse.closed = False
    await asyncio.sleep(3 * SKEW)  # sent clearly after the death, as an operator would
    extra = {"MessageAttributes": mark} if mark else {}
    sqs.send_message(QueueUrl=source, MessageBody=wire_sqs.body(job_id, "default"), **extra)
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        async with serving(queue, warehouse):
            await until(lambda: asyncio.sleep(0, depth(sqs, source) == 0))
            await until(lambda: asyncio.sleep(0, bool(moved_back_records(caplog))))
    job = await queue.get(job_id)
    assert job is not None and job.status is JobStatus.DEAD and warehouse.shipped == []
    assert [entry.kind for entry in job.history if entry.kind == "redrive"] == []
    [said] = moved_back_records(caplog)
    text = said.getMessage()
    assert said.levelno == logging.WARNING and why in text
    assert "sqsjobs dlq redrive" in text and f"sqsjobs jobs retry {job_id}" in text
    assert depth(sqs, dlq) == 1  # the store's own copy is still there to redrive
    reply = sqs.receive_message(QueueUrl=dlq, MessageAttributeNames=["All"])
    [copy] = reply["Messages"]
    assert json.loads(copy["Body"])["id"] == job_id
    assert "sqsjobs.revive" in copy["MessageAttributes"]


async def test_a_copy_revives_only_the_death_it_was_sent_for(
    store: SqsJobStore, sqs: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A retried job that died again has a new key: its first copy is a stale one."""
    warehouse = Warehouse()
    queue, job_id = await dead_job(store, sqs, warehouse)
    dlq, source = store.dead_letter_queue_urls["default"], store.queue_urls["default"]
    reply = sqs.receive_message(QueueUrl=dlq, MessageAttributeNames=["All"])
    [first] = reply["Messages"]  # kept aside, hidden: the copy of the first death
    async with serving(queue, warehouse):
        assert await store.retry(job_id, time.time(), by="an operator")
        await until(lambda: status_is(queue, job_id, JobStatus.DEAD))
        died_again = await queue.get(job_id)
        assert died_again is not None and died_again.history_count >= 3
        warehouse.closed = False
        with caplog.at_level(logging.INFO, logger="sqsjobs"):
            marks = first["MessageAttributes"]
            sqs.send_message(QueueUrl=source, MessageBody=first["Body"], MessageAttributes=marks)
            await until(lambda: asyncio.sleep(0, bool(moved_back_records(caplog))))
    job = await queue.get(job_id)
    assert job is not None and job.status is JobStatus.DEAD and warehouse.shipped == []
    [said] = moved_back_records(caplog)
    assert WRONG_KEY in said.getMessage()


def dead_record(job_id: str = "j-1", key: str | None = "k" * 32) -> Stored:
    job = prepared({"Bestellung": "ü-7"}).job.model_copy(update={"id": job_id})
    item = stored(job, status=JobStatus.DEAD, attempts=1, expires_at=NOW + 86_400)
    if key is not None:
        item["revive_key"] = {"S": key}
    return stored_from_item(item)


def test_a_stray_duplicate_sent_before_the_death_is_only_deleted() -> None:
    """At-least-once delivery can bring a dead job's old message back: not a redrive."""
    record = dead_record()
    before = message(wire_sqs.body(record.job.id, "default"), sent_at=record.updated_at - 4.2)
    aws = FakeAws()
    assert drive(moved_back(layout(), "default", before, record, NOW), aws) is None
    assert aws.calls == []


def test_a_copy_with_the_records_key_revives_under_that_key() -> None:
    record = dead_record()
    copy = message(wire_sqs.body(record.job.id, "default"))._replace(
        copied=True, revive_key="k" * 32
    )
    revived = stored(record.job, status=JobStatus.QUEUED, attempts=0)
    aws = FakeAws(update_item=[{"Attributes": revived}])
    result = drive(moved_back(layout(), "default", copy, record, NOW), aws)
    assert result is not None and result.refused is None
    [write] = aws.calls
    values = write.params["ExpressionAttributeValues"]
    assert values[":revive_key"] == {"S": "k" * 32}
    assert "revive_key = :revive_key" in write.params["ConditionExpression"].replace("#", "")


def test_a_lambda_event_record_carries_the_copy_mark_and_its_key() -> None:
    record = {
        "messageId": "m-1",
        "receiptHandle": "h",
        "body": "{}",
        "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1796094741243"},
        "messageAttributes": {
            "sqsjobs.copy": {"stringValue": "dead-letter", "dataType": "String"},
            "sqsjobs.revive": {"stringValue": "k" * 32, "dataType": "String"},
        },
    }
    parsed = wire_sqs.message_from_record(record)
    assert parsed.copied and parsed.revive_key == "k" * 32
    record["messageAttributes"] = {"sqsjobs.revive": {"stringValue": "k", "dataType": "String"}}
    unmarked = wire_sqs.message_from_record(record)
    assert not unmarked.copied and unmarked.revive_key is None  # a key alone proves nothing
