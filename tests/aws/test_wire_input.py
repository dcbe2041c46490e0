"""Bad input over the wire: raw messages on the queue and raw items in the table.

Whatever reaches a worker from outside the library (a foreign producer, an operator's
console, a bug elsewhere), it must survive it, settle each as ``docs/explanation/aws-store.md``
documents and say so in one log line each:

- a message that is not a delivery token for its queue (not JSON, 200 KB, wrong schema
  version, wrong field types, extra fields, another queue's name), or that names a job
  of another queue: copied to the DLQ, deleted, ``jobs.malformed_message`` (WARNING);
- a token naming a job that has no record (a forged id): deleted, ``jobs.unknown_job``
  (INFO);
- a token naming an item that is not a record the library can read (attributes
  missing, wrong types, a payload that is not JSON, an unknown status): the message
  goes to the DLQ with ``jobs.malformed_message``; the item is left as it was unless
  the claim was written, in which case it is marked dead.

Each emulator test runs one worker with these among good jobs, and checks every message
and item was settled exactly so, with exactly one line each; the pure tests below pin
the claim flow's part on the scripted fake.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections import Counter
from typing import Any

import boto3
import pytest

from sqsjobs import Job, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.flows import claim as _claim
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS
from sqsjobs.aws.wire.items import item_from_job, job_key
from sqsjobs.aws.wire.protocol import AwsError, Throttled, drive
from sqsjobs.aws.wire.sqs import Message

from .conftest import depth
from .fakes import DLQ, NOW, FakeAws, layout, prepared, refused, stored


def token(job_id: str, queue: str = "default", lease: Any = 30.0, v: Any = 1) -> str:
    return json.dumps({"v": v, "id": job_id, "queue": queue, "lease": lease})


def dead_letter_bodies(sqs: Any, url: str) -> list[str]:
    bodies: list[str] = []
    while messages := sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=60
    ).get("Messages", []):
        bodies += [m["Body"] for m in messages]
    return bodies


async def serve_until(
    store: SqsJobStore, sqs: Any, done: asyncio.Event, caplog: pytest.LogCaptureFixture
) -> JobWorker:
    """A worker on the default queue until ``done`` and the queue is empty; still serving?"""
    worker = JobWorker(
        JobQueue(store), {"good": lambda ctx: "ok"}, queues=["default"], concurrency=2
    )
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        worker.start()
        try:
            await asyncio.wait_for(done.wait(), 20)
            deadline = time.monotonic() + 10  # deletes of finished jobs are batched
            while depth(sqs, store.queue_urls["default"]):
                assert time.monotonic() < deadline, "messages were left on the queue"
                await asyncio.sleep(0.2)
            assert worker.state.running
        finally:
            await worker.stop()
    return worker


def lines(caplog: pytest.LogCaptureFixture, event: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if getattr(r, "event", "") == event]


def per_message(found: list[str], message_ids: dict[str, str]) -> dict[str, int]:
    """How many log lines name each message id."""
    return {case: sum(mid in line for line in found) for case, mid in message_ids.items()}


async def test_raw_messages_are_dead_lettered_or_deleted_with_one_line_each(
    store: SqsJobStore, sqs: Any, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = (await JobQueue(store).enqueue("good", queue="other")).job
    malformed = {
        "garbage": "this is not json {",
        "huge": "x" * 200_000,
        "array": "[1, 2, 3]",
        "version 2": token("a" * 32, v=2),
        "version true": token("a" * 32, v=True),
        "numeric id": token(7),  # type: ignore[arg-type]
        "empty id": token(""),
        "extra field": json.dumps(
            {"v": 1, "id": "a" * 32, "queue": "default", "lease": 30, "x": 1}
        ),
        "for another queue": token("a" * 32, queue="other"),
        "another queue's job": token(elsewhere.id),
    }
    # Version 1 bodies carried a lease, which is now read from the record only: whatever
    # it says, the body just names a job (here one without a record).
    unknown = {
        "forged id": token(uuid.uuid4().hex),
        "lease as text": token(uuid.uuid4().hex, lease="30"),
        "negative lease": token(uuid.uuid4().hex, lease=-1),
        "not a number lease": token(uuid.uuid4().hex, lease=float("nan")),
    }
    url = store.queue_urls["default"]
    message_ids = {
        case: sqs.send_message(QueueUrl=url, MessageBody=body)["MessageId"]
        for case, body in {**malformed, **unknown}.items()
    }
    done = asyncio.Event()
    good = (await JobQueue(store).enqueue("good")).job
    watching = _when_completed(store, good, done)
    await serve_until(store, sqs, done, caplog)
    await watching

    dead_letters = dead_letter_bodies(sqs, store.dead_letter_queue_urls["default"])
    assert Counter(dead_letters) == Counter(malformed.values())
    ids = {case: mid for case, mid in message_ids.items() if case not in unknown}
    assert per_message(lines(caplog, "jobs.malformed_message"), ids) == dict.fromkeys(ids, 1)
    assert per_message(lines(caplog, "jobs.unknown_job"), message_ids) == {
        case: int(case in unknown) for case in message_ids
    }
    assert not lines(caplog, "jobs.worker.claim_failed")
    untouched = await JobQueue(store).get(elsewhere.id)
    assert untouched is not None and (untouched.status, untouched.attempts) == (
        JobStatus.QUEUED,
        0,
    )


def _when_completed(store: SqsJobStore, job: Job, done: asyncio.Event) -> asyncio.Task[None]:
    async def watch() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            record = await JobQueue(store).get(job.id)
            if record is not None and record.status is JobStatus.COMPLETED:
                done.set()
                return
            await asyncio.sleep(0.1)

    return asyncio.ensure_future(watch())


async def test_raw_items_are_dead_lettered_with_one_line_each(
    store: SqsJobStore, aws_endpoint: str, sqs: Any, caplog: pytest.LogCaptureFixture
) -> None:
    queue = JobQueue(store)
    model = (await queue.enqueue("good", {"n": 1})).job  # a well-formed record to vary
    base = item_from_job(model, None, DEFAULT_SHARDS)

    def variant(job_id: str, **changes: Any) -> dict[str, Any]:
        item = {**base, **job_key(job_id), "id": {"S": job_id}, **changes}
        return {name: value for name, value in item.items() if value is not None}

    items = {
        "missing attributes": {
            **job_key("bare"),
            "id": {"S": "bare"},
            "queue": {"S": "default"},
            "status": {"S": "queued"},
        },
        "attempts as text": variant("attempts-s", attempts={"S": "zero"}),
        "payload not json": variant("payload-x", payload={"S": "{not json"}),
        "unknown status": variant("paused", status={"S": "paused"}),
        "status as number": variant("status-n", status={"N": "1"}),
        # (Not a delayed job's run_at as text: moto answers its claim with HTTP 500, where
        # DynamoDB finds the condition false and refuses it like any other.)
        "created_at as text": variant("created-s", created_at={"S": "yesterday"}),
        "no lease": variant("no-lease", lease=None),
    }
    table = store.table_name
    client = _dynamodb(aws_endpoint)
    for item in items.values():
        client.put_item(TableName=table, Item=item)
    url = store.queue_urls["default"]
    message_ids = {
        case: sqs.send_message(QueueUrl=url, MessageBody=token(item["id"]["S"]))["MessageId"]
        for case, item in items.items()
    }
    done = asyncio.Event()
    watching = _when_completed(store, model, done)
    await serve_until(store, sqs, done, caplog)
    await watching

    dead_letters = dead_letter_bodies(sqs, store.dead_letter_queue_urls["default"])
    assert sorted(json.loads(b)["id"] for b in dead_letters) == sorted(
        item["id"]["S"] for item in items.values()
    )
    logged = lines(caplog, "jobs.malformed_message")
    assert per_message(logged, message_ids) == dict.fromkeys(items, 1)
    assert not lines(caplog, "jobs.worker.claim_failed")
    after = {
        case: client.get_item(TableName=table, Key=job_key(item["id"]["S"]), ConsistentRead=True)[
            "Item"
        ]
        for case, item in items.items()
    }
    # Where the claim could be written, the record is dead now, with the reason.
    # (Not "no lease": the claim's lease comes from the record, so it cannot apply there.)
    written = {"payload not json": "JSONDecodeError", "created_at as text": "KeyError"}
    for case, error in written.items():
        claimed = after.pop(case)
        assert claimed["status"] == {"S": "dead"}
        assert claimed["last_error"]["S"].startswith(f"malformed record: {error}")
    assert after == {case: item for case, item in items.items() if case in after}
    client.close()


def _dynamodb(endpoint: str) -> Any:
    return boto3.client("dynamodb", endpoint_url=endpoint)


# -- the same on the scripted fake (pure) ---------------------------------------------------


def claim_batch(aws: FakeAws, job_ids: list[str]) -> _claim.Claimed:
    messages = [
        Message(f"m-{i}", f"h-{i}", token(job_id), 1, NOW) for i, job_id in enumerate(job_ids)
    ]
    return drive(_claim.claim_received(layout(), "default", messages, "w", NOW), aws)


def running(job: Job) -> dict[str, Any]:
    return stored(job, status=JobStatus.RUNNING, attempts=1, lease_token="t")


def test_a_claimed_record_that_cannot_be_read_is_dead_lettered_with_its_message() -> None:
    good, bad = prepared(1).job, prepared(2).job
    unreadable = {**running(bad), "payload": {"S": "{not json"}}
    aws = FakeAws(
        update_item=[{"Attributes": unreadable}, {"Attributes": running(good)}, {}],
        send_message_batch=[{"Successful": [{"Id": "0"}]}],
    )
    claimed = claim_batch(aws, [bad.id, good.id])
    assert [d.job.id for d in claimed.deliveries] == [good.id]  # the batch goes on
    [(message, reason)] = claimed.malformed
    assert message.message_id == "m-0" and reason.startswith(f"the record of job {bad.id}")
    assert aws.operations == [
        "update_item",
        "update_item",
        "update_item",
        "send_message_batch",
        "delete_message_batch",
    ]
    marked = aws.calls[2].params  # dead, under the token this claim wrote
    assert marked["ExpressionAttributeValues"][":new_status"] == {"S": "dead"}
    assert (
        marked["ExpressionAttributeValues"][":token"]
        == (aws.calls[0].params["ExpressionAttributeValues"][":token"])
    )
    assert aws.calls[3].params["QueueUrl"] == DLQ


@pytest.mark.parametrize(
    "refusal",
    [
        refused({**stored(prepared().job), "status": {"S": "paused"}}),
        refused({**stored(prepared().job), "status": {"N": "1"}}),
        AwsError("ValidationException", "operand type: S", "update_item", RuntimeError()),
    ],
    ids=["unknown status", "status as number", "claim cannot apply"],
)
def test_a_record_that_refuses_a_claim_and_cannot_be_read_only_loses_its_message(
    refusal: AwsError,
) -> None:
    aws = FakeAws(update_item=[refusal], send_message_batch=[{"Successful": [{"Id": "0"}]}])
    claimed = claim_batch(aws, ["x" * 32])
    assert (claimed.deliveries, claimed.errors, len(claimed.malformed)) == ([], [], 1)
    assert aws.operations == ["update_item", "send_message_batch", "delete_message_batch"]


def test_a_message_for_a_missing_record_is_deleted_and_named() -> None:
    aws = FakeAws(update_item=[refused(None)])
    claimed = claim_batch(aws, ["f" * 32])
    assert [(m.message_id, job_id) for m, job_id in claimed.unknown] == [("m-0", "f" * 32)]
    assert aws.operations == ["update_item", "delete_message_batch"]


def test_throttling_is_not_taken_for_a_malformed_record() -> None:
    aws = FakeAws(update_item=[Throttled("ThrottlingException", "", "update_item", RuntimeError())])
    claimed = claim_batch(aws, ["x" * 32])
    assert (len(claimed.errors), claimed.malformed, aws.operations) == (1, [], ["update_item"])


def test_a_claim_write_with_no_answer_is_released_under_its_token() -> None:
    """It may have been applied: a lease nobody runs would spend an attempt."""
    timeout = AwsError("ReadTimeoutError", "Read timeout", "update_item", TimeoutError())
    aws = FakeAws(update_item=[timeout])
    claimed = claim_batch(aws, ["x" * 32])
    assert (len(claimed.errors), aws.operations) == (1, ["update_item", "update_item"])
    [(job_id, token)] = claimed.unanswered
    release = aws.calls[-1].params
    assert release["Key"] == {"pk": {"S": f"job#{job_id}"}}
    assert release["ExpressionAttributeValues"][":token"] == {"S": token}
    assert "#attempts - :one" in release["UpdateExpression"]
