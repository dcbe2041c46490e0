"""make_lambda_handler over real SQS records from the emulator: every outcome, FIFO, deadlines."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sqsjobs import Backoff, JobContext, JobFatalError, JobQueue, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler
from sqsjobs.aws.wire.sqs import body

from .conftest import Context, receive_event


def visible(sqs: Any, url: str) -> int:
    attributes = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def test_successes_are_not_reported_and_left_for_lambda_to_delete(
    store: SqsJobStore, sqs: Any
) -> None:
    queue = SyncJobQueue(store)
    jobs = [queue.enqueue("add", {"a": i, "b": 1}).job for i in range(3)]
    handler = make_lambda_handler({"add": lambda payload: payload["a"] + payload["b"]}, store=store)
    event = receive_event(sqs, store.queue_urls["default"], 3)
    assert handler(event, Context()) == {"batchItemFailures": []}
    results = [queue.get(job.id) for job in jobs]
    assert [(j.status, j.result) for j in results if j] == [
        (JobStatus.COMPLETED, 1),
        (JobStatus.COMPLETED, 2),
        (JobStatus.COMPLETED, 3),
    ]
    in_flight = sqs.get_queue_attributes(
        QueueUrl=store.queue_urls["default"],
        AttributeNames=["ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]["ApproximateNumberOfMessagesNotVisible"]
    assert in_flight == "3"  # the handler deleted nothing: Lambda deletes what is not reported


def test_a_retry_is_reported_and_hidden_for_its_backoff(store: SqsJobStore, sqs: Any) -> None:
    queue = SyncJobQueue(store)
    job = queue.enqueue("flaky").job

    async def flaky(ctx: JobContext) -> None:
        raise ConnectionError("upstream down")

    handler = make_lambda_handler(
        {"flaky": flaky}, store=store, backoff=Backoff(base=2.0, max=2.0, random=lambda: 1.0)
    )
    event = receive_event(sqs, store.queue_urls["default"], 1)
    reply = handler(event, Context())
    assert reply == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    failed = queue.get(job.id)
    assert failed is not None and failed.status is JobStatus.DELAYED and failed.attempts == 1
    assert failed.last_error == "ConnectionError: upstream down"
    assert visible(sqs, store.queue_urls["default"]) == 0  # hidden for the 2 s backoff
    time.sleep(2.2)
    assert visible(sqs, store.queue_urls["default"]) == 1


def test_a_dead_job_goes_to_the_dlq_and_is_not_reported(store: SqsJobStore, sqs: Any) -> None:
    queue = SyncJobQueue(store)
    job = queue.enqueue("charge", {"cents": -5}).job

    def charge(payload: dict[str, int]) -> None:
        raise JobFatalError("negative amount")

    handler = make_lambda_handler({"charge": charge}, store=store)
    event = receive_event(sqs, store.queue_urls["default"], 1)
    assert handler(event, Context()) == {"batchItemFailures": []}
    dead = queue.get(job.id)
    assert dead is not None and dead.status is JobStatus.DEAD
    assert visible(sqs, store.dead_letter_queue_urls["default"]) == 1


def test_a_result_that_cannot_be_stored_is_dead_after_one_run_and_not_reported(
    store: SqsJobStore, sqs: Any
) -> None:
    queue = SyncJobQueue(store)
    job = queue.enqueue(
        "card.charge", {"cents": 1999, "card": "visa •••• 4242"}, max_attempts=5
    ).job
    charged: list[int] = []

    def charge(ctx: JobContext) -> dict[str, Any]:
        charged.append(ctx.attempt)
        return {"charged_at": datetime.now(UTC)}  # the work is done; the result is not JSON

    handler = make_lambda_handler({"card.charge": charge}, store=store)
    event = receive_event(sqs, store.queue_urls["default"], 1)
    assert handler(event, Context()) == {"batchItemFailures": []}  # nothing for Lambda to retry
    dead = queue.get(job.id)
    assert dead is not None and (dead.status, dead.attempts) == (JobStatus.DEAD, 1)
    assert dead.last_error is not None and "a datetime is not JSON" in dead.last_error
    assert charged == [1]
    assert visible(sqs, store.dead_letter_queue_urls["default"]) == 1


def test_the_invocation_deadline_releases_a_long_job(store: SqsJobStore, sqs: Any) -> None:
    queue = SyncJobQueue(store)
    job = queue.enqueue("slow", timeout=60).job

    async def slow(ctx: JobContext) -> None:
        await asyncio.sleep(30)

    handler = make_lambda_handler({"slow": slow}, store=store, safety_margin=1.0)
    event = receive_event(sqs, store.queue_urls["default"], 1)
    reply = handler(event, Context(remaining_ms=1_300))
    assert reply == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    released = queue.get(job.id)
    assert released is not None
    assert (released.status, released.attempts, released.last_error) == (
        JobStatus.QUEUED,
        0,
        "invocation deadline reached",
    )
    assert visible(sqs, store.queue_urls["default"]) == 1  # back at once for the next invocation


def test_fifo_runs_in_order_and_stops_at_the_first_failure(
    store: SqsJobStore, sqs: Any, aws_endpoint: str
) -> None:
    prefix = store.table_name
    fifo_url = sqs.create_queue(
        QueueName=f"{prefix}-orders.fifo", Attributes={"FifoQueue": "true"}
    )["QueueUrl"]
    producer = SyncJobQueue(store, default_queue="default")
    jobs = [producer.enqueue("step", n, queue="default").job for n in range(3)]
    fifo_store = SqsJobStore(
        table_name=store.table_name,
        queue_urls={"default": fifo_url},
        dead_letter_queue_urls=dict(store.dead_letter_queue_urls),
        endpoint_url=aws_endpoint,
    )
    for n, job in enumerate(jobs):
        sqs.send_message(
            QueueUrl=fifo_url,
            MessageBody=body(job.id, "default"),
            MessageGroupId="orders",
            MessageDeduplicationId=f"{job.id}-{n}",
        )
    ran: list[int] = []

    def step(payload: int) -> None:
        ran.append(payload)
        if payload == 1:
            raise RuntimeError("step 1 failed")

    handler = make_lambda_handler({"step": step}, store=fifo_store)
    event = receive_event(sqs, fifo_url, 3)
    reply = handler(event, Context())
    ids = [r["messageId"] for r in event["Records"]]
    assert ran == [0, 1]
    assert reply == {"batchItemFailures": [{"itemIdentifier": i} for i in ids[1:]]}
    statuses = [producer.get(job.id) for job in jobs]
    assert [(j.status, j.attempts) for j in statuses if j] == [
        (JobStatus.COMPLETED, 1),
        (JobStatus.DELAYED, 1),
        (JobStatus.QUEUED, 0),
    ]
    fifo_store.close()


def test_a_malformed_record_goes_to_the_dlq_without_stopping_the_batch(
    store: SqsJobStore, sqs: Any
) -> None:
    queue = SyncJobQueue(store)
    job = queue.enqueue("ok").job
    sqs.send_message(QueueUrl=store.queue_urls["default"], MessageBody="not a job")
    handler = make_lambda_handler({"ok": lambda ctx: "fine"}, store=store)
    event = receive_event(sqs, store.queue_urls["default"], 2)
    handler(event, Context())
    done = queue.get(job.id)
    assert done is not None and done.status is JobStatus.COMPLETED
    assert visible(sqs, store.dead_letter_queue_urls["default"]) == 1


def test_records_the_claim_settled_are_not_reported(
    store: SqsJobStore, sqs: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A body that is no job's (moved to the DLQ), a job with no record and a duplicate
    of a job that already completed (both deleted) need no retry: naming them would only
    count them as failures. A job that is not due yet is named: it must come back."""
    queue = SyncJobQueue(store)
    url = store.queue_urls["default"]
    done = queue.enqueue("ok").job
    handler = make_lambda_handler({"ok": lambda ctx: "fine"}, store=store)
    assert handler(receive_event(sqs, url, 1), Context()) == {"batchItemFailures": []}
    sqs.send_message(QueueUrl=url, MessageBody=body(done.id, "default"))  # a duplicate
    sqs.send_message(QueueUrl=url, MessageBody='{"order": 7} — not a job')
    sqs.send_message(QueueUrl=url, MessageBody=body("0f3c9a7e5b1d4c2e8a6f0b9d7c5e3a1f", "default"))
    later = queue.enqueue("ok", run_at=datetime.now(UTC) + timedelta(hours=2)).job
    sqs.send_message(QueueUrl=url, MessageBody=body(later.id, "default"))  # early, as if lost
    event = receive_event(sqs, url, 5)
    by_body = {r["body"]: r["messageId"] for r in event["Records"]}
    with caplog.at_level(logging.WARNING, logger="sqsjobs"):
        reply = handler(event, Context())
    assert reply == {"batchItemFailures": [{"itemIdentifier": by_body[body(later.id, "default")]}]}
    assert visible(sqs, store.dead_letter_queue_urls["default"]) == 1
    orphan = [r for r in caplog.records if r.__dict__.get("event") == "jobs.unknown_job"]
    assert len(orphan) == 1 and orphan[0].levelno == logging.WARNING


def test_a_record_from_an_unknown_queue_is_refused(store: SqsJobStore) -> None:
    handler = make_lambda_handler({"ok": lambda ctx: None}, store=store)
    event = {
        "Records": [
            {
                "messageId": "m",
                "receiptHandle": "r",
                "body": "{}",
                "eventSourceARN": "arn:aws:sqs:us-east-1:1:elsewhere",
            }
        ]
    }
    with pytest.raises(ValueError, match="this store's queues are"):
        handler(event, Context())


def test_importing_the_handler_module_loads_no_asyncio_aws_stack() -> None:
    code = (
        "import sys, sqsjobs.aws.lambda_\n"
        "bad = {'aioboto3', 'aiobotocore', 'aiohttp', 'click', 'rich', 'prometheus_client',\n"
        "       'opentelemetry'} & set(sys.modules)\n"
        "print(sorted(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# What a Lambda function that only runs jobs must not pay for at its cold start: the
# producer's writes and values, lookups, operator calls, the worker's receive-ahead.
NOT_FOR_RUNNING_JOBS = (
    "sqsjobs.core.requests",
    "sqsjobs.producer.queue",
    "sqsjobs.worker.job_worker",
    "sqsjobs.memory.store",
    "sqsjobs.aws.flows.put",
    "sqsjobs.aws.flows.lookup",
    "sqsjobs.aws.flows.listing",
    "sqsjobs.aws.flows.reconcile",
    "sqsjobs.aws.flows.redrive",
    "sqsjobs.aws.flows.stats",
    "sqsjobs.aws.store.provision",
)
# Dataclasses the public API defines as such (SPEC); a frozen dataclass execs six methods
# when its module loads, so internal records on this path are NamedTuples.
PUBLIC_DATACLASSES = {"sqsjobs.core.backoff.Backoff", "sqsjobs.handlers.context.JobContext"}


def test_importing_the_handler_module_builds_only_what_running_a_job_needs() -> None:
    code = (
        "import dataclasses, json, sys, sqsjobs.aws.lambda_\n"
        "mods = {n: m for n, m in sys.modules.items() if n.startswith('sqsjobs')}\n"
        "classes = {f'{n}.{k}' for n, m in mods.items() for k, v in vars(m).items()\n"
        "           if isinstance(v, type) and v.__module__ == n and dataclasses.is_dataclass(v)}\n"
        "print(json.dumps({'modules': sorted(mods), 'dataclasses': sorted(classes)}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    assert "sqsjobs.aws.flows.settle" in loaded["modules"]  # the probe sees the run path
    assert [name for name in NOT_FOR_RUNNING_JOBS if name in loaded["modules"]] == []
    assert set(loaded["dataclasses"]) == PUBLIC_DATACLASSES


async def test_making_a_handler_leaves_the_store_a_worker_uses_as_it_was(
    store: SqsJobStore, sqs: Any
) -> None:
    make_lambda_handler({"invoice.send": lambda ctx: None}, store=store)
    queue = JobQueue(store).for_tenant("malmo-4")
    enqueued = (await queue.enqueue("invoice.send", {"n": 1796094741.2439704})).job
    [job] = await store.claim("default", "worker-ö", time.time(), wait=1)
    assert job.id == enqueued.id and job.lease_token is not None
    assert await store.complete(job.id, job.lease_token, time.time(), {"sent": True})
    await store.aclose()  # a worker's store deletes a completed job's message itself
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    url = store.queue_urls["default"]
    depths = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    assert {name: depths[name] for name in names} == dict.fromkeys(names, "0")
