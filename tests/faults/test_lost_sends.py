"""Sends that fail after their record was written, and writes that answer late.

A producer's retry with the same idempotency key heals a send that failed: the record
was written, its ``SendMessage`` was refused, the producer retried as the docs say; the
retry is a duplicate, and it re-sends the message once the record has waited
``resend_after`` seconds without one, so the job does not wait for the reconciler.
Without a retry, the reconciler repairs it. The fault layer refuses the sends (an error
botocore does not retry, as when IAM says no) and slows the writes.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sqsjobs import Job, JobQueue, JobStatus, JobStoreError, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.store.claims import CANCELLED_CLAIM
from tests.aws.conftest import QUEUES, SKEW, depth
from tests.support.clock import AheadClock

from .conftest import FaultyAws
from .faulty_aws import OBSERVER_CONFIG, Fault, FaultPlan

# Judged on the store's clock (an ``AheadClock``), which the tests move past it: no pause of a
# loaded machine between two calls can make a record look older than the test says.
RESEND_AFTER = 60.0
REFUSED_SEND = FaultPlan(
    rate=1.0,
    kinds=(Fault.DENIED,),
    services=frozenset({"sqs"}),
    actions=frozenset({"SendMessage"}),
    limit=1,
)


@pytest.fixture
def clock() -> AheadClock:
    return AheadClock()


@pytest.fixture
async def healing(faulty_aws: FaultyAws, clock: AheadClock) -> AsyncIterator[SqsJobStore]:
    made = SqsJobStore.create(
        f"f{uuid.uuid4().hex[:12]}",
        queues=QUEUES,
        endpoint_url=faulty_aws.endpoint,
        clock_skew=SKEW,
        resend_after=RESEND_AFTER,
        clock=clock,
    )
    try:
        yield made
    finally:
        await made.aclose()


@pytest.fixture
def sqs(faulty_aws: FaultyAws) -> Iterator[Any]:
    """An observer's client: never faulted."""
    client = boto3.client("sqs", endpoint_url=faulty_aws.endpoint, config=OBSERVER_CONFIG)
    yield client
    client.close()


async def enqueue_losing_the_send(
    store: SqsJobStore, faulty_aws: FaultyAws, **options: Any
) -> None:
    """An enqueue whose record is written and whose message is refused."""
    with faulty_aws.injector.faults(REFUSED_SEND), pytest.raises(JobStoreError) as refused:
        await JobQueue(store).enqueue("invoice.send", {"n": 7}, **options)
    assert (refused.value.operation, refused.value.code) == ("SendMessage", "AccessDenied")
    assert not refused.value.retryable and isinstance(refused.value.__cause__, ClientError)


async def test_a_retried_enqueue_re_sends_the_lost_message(
    healing: SqsJobStore, sqs: Any, faulty_aws: FaultyAws, clock: AheadClock
) -> None:
    await enqueue_losing_the_send(healing, faulty_aws, idempotency_key="inv-7")
    url = healing.queue_urls["default"]
    assert depth(sqs, url) == 0

    queue = JobQueue(healing)
    early = await queue.enqueue("invoice.send", {"n": 7}, idempotency_key="inv-7")
    assert early.duplicate and depth(sqs, url) == 0  # too soon: it may just be slow
    clock.offset += RESEND_AFTER + 1
    retried = await queue.enqueue("invoice.send", {"n": 7}, idempotency_key="inv-7")
    assert retried.duplicate and retried.job.id == early.job.id
    assert depth(sqs, url) == 1

    [job] = await healing.claim("default", "w", clock(), wait=1)
    assert (job.id, job.attempts) == (early.job.id, 1)
    assert await healing.complete(job.id, job.lease_token or "", clock(), None)


async def test_concurrent_retries_send_one_message(
    healing: SqsJobStore, sqs: Any, faulty_aws: FaultyAws, clock: AheadClock
) -> None:
    await enqueue_losing_the_send(healing, faulty_aws, idempotency_key="inv-8")
    clock.offset += RESEND_AFTER + 1
    queue = JobQueue(healing)
    results = await asyncio.gather(
        *(queue.enqueue("invoice.send", {"n": 7}, idempotency_key="inv-8") for _ in range(5))
    )
    assert all(r.duplicate for r in results)
    assert depth(sqs, healing.queue_urls["default"]) == 1


async def test_the_blocking_producer_heals_too(
    healing: SqsJobStore, sqs: Any, faulty_aws: FaultyAws, clock: AheadClock
) -> None:
    await enqueue_losing_the_send(healing, faulty_aws, idempotency_key="inv-9", tenant="acme")
    clock.offset += RESEND_AFTER + 1
    retried = SyncJobQueue(healing).enqueue(
        "invoice.send", {"n": 7}, idempotency_key="inv-9", tenant="acme"
    )
    assert retried.duplicate and retried.job.status is JobStatus.QUEUED
    assert depth(sqs, healing.queue_urls["default"]) == 1


async def test_a_duplicate_of_a_job_already_claimed_sends_nothing(
    healing: SqsJobStore, sqs: Any, clock: AheadClock
) -> None:
    queue = JobQueue(healing)
    first = await queue.enqueue("invoice.send", {"n": 7}, idempotency_key="inv-10")
    [job] = await healing.claim("default", "w", clock())
    clock.offset += RESEND_AFTER + 1
    again = await queue.enqueue("invoice.send", {"n": 7}, idempotency_key="inv-10")
    assert again.duplicate and again.job.status is JobStatus.RUNNING
    assert depth(sqs, healing.queue_urls["default"]) == 1  # only the claimed message
    assert job.id == first.job.id


@pytest.mark.parametrize("value", [-1.0, float("nan"), "60", None])
def test_resend_after_is_a_finite_number_of_seconds(value: Any) -> None:
    with pytest.raises(ValueError, match="resend_after"):
        SqsJobStore(table_name="jobs", queue_urls={"default": "https://q"}, resend_after=value)


async def test_a_crash_between_put_and_send_is_repaired_by_the_reconciler(
    healing: SqsJobStore, faulty_aws: FaultyAws, clock: AheadClock
) -> None:
    queue = JobQueue(healing)
    with faulty_aws.injector.faults(REFUSED_SEND), pytest.raises(JobStoreError):
        await queue.enqueue("report", {"month": 1})
    [lost] = (await queue.list()).jobs
    assert lost.status is JobStatus.QUEUED
    assert await healing.claim("default", "w", clock()) == []
    assert (await healing.reconcile(grace=900)).resent == 0  # not stale yet
    clock.offset += 901
    report = healing.sync.reconcile(grace=900)
    assert (report.resent, report.dead) == (1, 0)
    assert (await healing.reconcile(grace=900)).resent == 0  # it was just re-sent
    [job] = await healing.claim("default", "w", clock(), wait=1)
    assert (job.id, job.attempts) == (lost.id, 1)
    assert await healing.complete(job.id, job.lease_token or "", clock(), None)


async def released_by_the_claim(queue: JobQueue, job_id: str) -> Job:
    """The record once the cancelled claim's release (a shielded write) has landed."""
    deadline = time.monotonic() + 60
    while True:
        found = await queue.get(job_id)
        assert found is not None
        if found.last_error == CANCELLED_CLAIM or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)


async def test_a_claim_cancelled_after_receiving_releases_what_it_claimed(
    healing: SqsJobStore, faulty_aws: FaultyAws, clock: AheadClock
) -> None:
    slow_claim_write = FaultPlan(
        rate=1.0,
        kinds=(Fault.SLOW,),
        services=frozenset({"dynamodb"}),
        actions=frozenset({"UpdateItem"}),
        limit=1,
        delay=0.6,
    )
    queue = JobQueue(healing)
    enqueued = (await queue.enqueue("interrupted")).job
    with faulty_aws.injector.faults(slow_claim_write):
        claiming = asyncio.create_task(healing.claim("default", "w", clock(), wait=1))
        # Received, and the claim write is in flight (held back by the fault).
        assert await asyncio.to_thread(faulty_aws.injector.faulted.wait, 30)
        claiming.cancel()
        with pytest.raises(asyncio.CancelledError):
            await claiming
    released = await released_by_the_claim(queue, enqueued.id)
    assert (released.status, released.attempts, released.last_error) == (
        JobStatus.QUEUED,
        0,
        CANCELLED_CLAIM,
    )
    # The release's message comes back once its visibility is reset, just after the record.
    [job] = await healing.claim("default", "w", clock(), wait=10)
    assert (job.id, job.attempts) == (enqueued.id, 1)
