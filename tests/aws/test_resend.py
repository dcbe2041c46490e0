"""A producer's retry with the same idempotency key heals a send that failed.

The record was written, its ``SendMessage`` failed, the producer retried as the docs say:
the retry is a duplicate, and it re-sends the message once the record has waited
``resend_after`` seconds without one, so the job does not wait for the reconciler.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sqsjobs import JobQueue, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.transports.errors import translate
from sqsjobs.aws.wire.protocol import Call, Reply

from .conftest import QUEUES, SKEW, depth

RESEND_AFTER = 0.5


@pytest.fixture
async def healing(aws_endpoint: str, prefix: str) -> AsyncIterator[SqsJobStore]:
    made = SqsJobStore.create(
        prefix,
        queues=QUEUES,
        endpoint_url=aws_endpoint,
        clock_skew=SKEW,
        resend_after=RESEND_AFTER,
    )
    try:
        yield made
    finally:
        await made.aclose()


async def enqueue_losing_the_send(
    store: SqsJobStore, monkeypatch: pytest.MonkeyPatch, **options: Any
) -> None:
    """An enqueue whose record is written and whose message never leaves."""
    send = store._send

    async def lose_the_send(call: Call) -> Reply:
        if call.operation == "send_message":
            error = {"Error": {"Code": "ServiceUnavailable", "Message": "try again"}}
            raise translate(ClientError(error, "SendMessage"), call.operation)
        return await send(call)

    with monkeypatch.context() as patched:
        patched.setattr(store, "_send", lose_the_send)
        with pytest.raises(ClientError):
            await JobQueue(store).enqueue("invoice.send", {"n": 7}, **options)


async def test_a_retried_enqueue_re_sends_the_lost_message(
    healing: SqsJobStore, sqs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    await enqueue_losing_the_send(healing, monkeypatch, idempotency_key="inv-7")
    url = healing.queue_urls["default"]
    assert depth(sqs, url) == 0

    queue = JobQueue(healing)
    early = await queue.enqueue("invoice.send", {"n": 7}, idempotency_key="inv-7")
    assert early.duplicate and depth(sqs, url) == 0  # too soon: it may just be slow
    await asyncio.sleep(RESEND_AFTER + 0.1)
    retried = await queue.enqueue("invoice.send", {"n": 7}, idempotency_key="inv-7")
    assert retried.duplicate and retried.job.id == early.job.id
    assert depth(sqs, url) == 1

    [job] = await healing.claim("default", "w", time.time(), wait=1)
    assert (job.id, job.attempts) == (early.job.id, 1)
    assert await healing.complete(job.id, job.lease_token or "", time.time(), None)


async def test_concurrent_retries_send_one_message(
    healing: SqsJobStore, sqs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    await enqueue_losing_the_send(healing, monkeypatch, idempotency_key="inv-8")
    await asyncio.sleep(RESEND_AFTER + 0.1)
    queue = JobQueue(healing)
    results = await asyncio.gather(
        *(queue.enqueue("invoice.send", {"n": 7}, idempotency_key="inv-8") for _ in range(5))
    )
    assert all(r.duplicate for r in results)
    assert depth(sqs, healing.queue_urls["default"]) == 1


async def test_the_blocking_producer_heals_too(
    healing: SqsJobStore, sqs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    await enqueue_losing_the_send(healing, monkeypatch, idempotency_key="inv-9", tenant="acme")
    await asyncio.sleep(RESEND_AFTER + 0.1)
    retried = SyncJobQueue(healing).enqueue(
        "invoice.send", {"n": 7}, idempotency_key="inv-9", tenant="acme"
    )
    assert retried.duplicate and retried.job.status is JobStatus.QUEUED
    assert depth(sqs, healing.queue_urls["default"]) == 1


async def test_a_duplicate_of_a_job_already_claimed_sends_nothing(
    healing: SqsJobStore, sqs: Any
) -> None:
    queue = JobQueue(healing)
    first = await queue.enqueue("invoice.send", {"n": 7}, idempotency_key="inv-10")
    [job] = await healing.claim("default", "w", time.time())
    await asyncio.sleep(RESEND_AFTER + 0.1)
    again = await queue.enqueue("invoice.send", {"n": 7}, idempotency_key="inv-10")
    assert again.duplicate and again.job.status is JobStatus.RUNNING
    assert depth(sqs, healing.queue_urls["default"]) == 1  # only the claimed message
    assert job.id == first.job.id


@pytest.mark.parametrize("value", [-1.0, float("nan"), "60", None])
def test_resend_after_is_a_finite_number_of_seconds(value: Any) -> None:
    with pytest.raises(ValueError, match="resend_after"):
        SqsJobStore(table_name="jobs", queue_urls={"default": "https://q"}, resend_after=value)
