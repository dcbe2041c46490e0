"""Dead-letter queues under attack and under load: what a DLQ pass may act on, and what a
retry or redrive may delete while the job it sent back dies again.

A DLQ pass (the reconciler, ``dlq list``, a redrive) records a job dead only for a message
the redrive policy really moved there, and only for a job of that DLQ's own queue. A
retry or redrive removes only the copies that were there before it sent the job back:
a poison job dies again within milliseconds, and the copy of that new death must stay.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sqsjobs import JobContext, JobFatalError, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore

from .conftest import SKEW, depth


def poison(ctx: JobContext) -> None:
    raise JobFatalError("the warehouse refused this order: Größe unbekannt")


def dlq_job_ids(sqs: Any, url: str) -> list[str]:
    """The job ids every message of a DLQ names (each received once, then shown again)."""
    ids: list[str] = []
    handles: list[str] = []
    while True:
        reply = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=30)
        messages = reply.get("Messages", [])
        if not messages:
            break
        ids += [json.loads(m["Body"])["id"] for m in messages]
        handles += [m["ReceiptHandle"] for m in messages]
    for handle in handles:
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
    return sorted(ids)


async def until(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


@pytest.fixture
async def poison_worker(store: SqsJobStore) -> AsyncIterator[JobWorker]:
    """A worker that dead-letters every job it runs, serving the default queue."""
    worker = JobWorker(JobQueue(store), {"order.ship": poison}, queues=["default"])
    worker.start()
    try:
        yield worker
    finally:
        await worker.stop(grace=2.0)


async def dead_since(queue: JobQueue, job_id: str, instant: float) -> bool:
    record = await queue.get(job_id)
    return (
        record is not None
        and record.status is JobStatus.DEAD
        and record.updated_at.timestamp() > instant
    )


async def test_a_retried_job_that_dies_again_keeps_its_dead_letter_copy(
    store: SqsJobStore, sqs: Any, poison_worker: JobWorker
) -> None:
    queue = JobQueue(store)
    dlq = store.dead_letter_queue_urls["default"]
    job = (await queue.enqueue("order.ship", {"order": 1}, max_attempts=1)).job
    await until(lambda: dead_since(queue, job.id, 0.0))
    await until(lambda: asyncio.sleep(0, depth(sqs, dlq) == 1))

    for turn in range(3):  # each retry: the job runs at once, dies, and its copy stays
        retried_at = time.time()
        assert await store.retry(job.id, time.time())
        await until(lambda at=retried_at: dead_since(queue, job.id, at))  # type: ignore[misc]
        await until(lambda: asyncio.sleep(0, depth(sqs, dlq) >= 1))
        await asyncio.sleep(0.3)  # a sweep still under way would have taken it by now
        assert dlq_job_ids(sqs, dlq) == [job.id], f"after retry {turn + 1}"
    letters = await store.dead_letters("default", limit=10)
    assert [letter.job_id for letter in letters] == [job.id]


async def test_redrive_all_keeps_the_copies_of_jobs_that_die_again(
    store: SqsJobStore, sqs: Any, poison_worker: JobWorker
) -> None:
    queue = JobQueue(store)
    dlq = store.dead_letter_queue_urls["default"]
    jobs = [
        (await queue.enqueue("order.ship", {"order": n, "note": "zurück"}, max_attempts=1)).job
        for n in range(14)
    ]
    for job in jobs:
        await until(lambda job=job: dead_since(queue, job.id, 0.0))  # type: ignore[misc]
    await until(lambda: asyncio.sleep(0, depth(sqs, dlq) == len(jobs)))

    redriven_at = time.time()
    report = await store.redrive("default")
    assert report.redriven == len(jobs)
    for job in jobs:
        await until(lambda job=job: dead_since(queue, job.id, redriven_at))  # type: ignore[misc]
    await until(lambda: asyncio.sleep(0, depth(sqs, dlq) >= len(jobs)))
    await asyncio.sleep(0.3)
    assert sorted(set(dlq_job_ids(sqs, dlq))) == sorted(job.id for job in jobs)


async def test_a_forged_message_cannot_dead_letter_another_queues_job(
    store: SqsJobStore, sqs: Any
) -> None:
    """Anyone who may send to ``default`` names a job of ``other`` whose worker crashed."""
    queue = JobQueue(store)
    victim = (await queue.enqueue("order.ship", {"order": 2}, queue="other", lease=1)).job
    [claimed] = await store.claim("other", "crashed-worker", time.time())
    assert claimed.id == victim.id  # ...and the worker dies: its lease runs out
    forged = json.dumps({"v": 2, "id": victim.id, "queue": "default"}, separators=(",", ":"))
    sqs.send_message(QueueUrl=store.queue_urls["default"], MessageBody=forged)
    await asyncio.sleep(1.0 + SKEW + 0.2)

    # A worker of ``default`` moves it to default's DLQ as misrouted...
    assert await store.claim("default", "worker-a", time.time(), wait=1) == []
    dlq = store.dead_letter_queue_urls["default"]
    assert depth(sqs, dlq) == 1
    # ...and however many passes look at it there, the victim is not theirs to judge.
    for _ in range(7):  # more receives than the queue's maxReceiveCount (5)
        await store.reconcile(grace=900.0, queues=["default"])
    record = await queue.get(victim.id)
    assert record is not None and record.status is JobStatus.RUNNING
    (letter,) = await store.dead_letters("default", limit=10)
    assert letter.job_id == victim.id and letter.job is None  # not shown as this queue's
    assert (await store.redrive("default")).discarded == 1  # discarded, not sent anywhere
    assert (await queue.get(victim.id)).status is JobStatus.RUNNING  # type: ignore[union-attr]

    # Its own queue still takes it over once the lease is over, as after any crash.
    [again] = await store.claim("other", "worker-b", time.time())
    assert again.id == victim.id and again.attempts == 2


async def test_a_store_copy_in_the_dlq_never_counts_as_redriven(
    store: SqsJobStore, sqs: Any
) -> None:
    """A stale copy of a job that runs again is not a redriven message, however often seen."""
    queue = JobQueue(store)
    job = (await queue.enqueue("order.ship", {"order": 3}, lease=1, max_attempts=5)).job
    [claimed] = await store.claim("default", "w", time.time())
    assert await store.fail(claimed.id, claimed.lease_token or "", "boom", None, time.time())
    assert await store.claim("default", "w", time.time(), wait=1) == []  # the dead message
    dlq = store.dead_letter_queue_urls["default"]
    # A copy left behind (an operator's revive outside the store, say) while the job runs
    # again under a worker that crashes:
    body = json.dumps({"v": 2, "id": job.id, "queue": "default"}, separators=(",", ":"))
    store.sync.retry(job.id, time.time())
    sqs.send_message(
        QueueUrl=dlq,
        MessageBody=body,
        MessageAttributes={"sqsjobs.copy": {"DataType": "String", "StringValue": "dead-letter"}},
    )
    [again] = await store.claim("default", "crashed", time.time())
    await asyncio.sleep(1.0 + SKEW + 0.2)
    for _ in range(7):
        await store.reconcile(grace=900.0, queues=["default"])
    record = await queue.get(job.id)
    assert record is not None and record.status is JobStatus.RUNNING
    assert record.attempts == again.attempts
