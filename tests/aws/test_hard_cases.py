"""The cases SQS makes hard, each on the emulator: duplicates, crashes, poison, redrive."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest

from sqsjobs import JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.core.lifecycle import LEASE_EXPIRED_ERROR

from .conftest import SKEW, WAIT, depth


def twin(store: SqsJobStore, endpoint: str) -> SqsJobStore:
    """Another process's store on the same resources."""
    return SqsJobStore(
        table_name=store.table_name,
        queue_urls=store.queue_urls,
        endpoint_url=endpoint,
        clock_skew=SKEW,
        wait_time=WAIT,
    )


def body(job_id: str, queue: str = "default", lease: float = 30.0) -> str:
    return json.dumps({"v": 1, "id": job_id, "queue": queue, "lease": lease})


async def test_one_message_delivered_to_two_workers_is_claimed_once(
    store: SqsJobStore, aws_endpoint: str, sqs: Any
) -> None:
    other = twin(store, aws_endpoint)
    try:
        enqueued = (await JobQueue(store).enqueue("once")).job
        [job] = await store.claim("default", "w1", time.time())
        # SQS delivers the job again while the first worker still runs it.
        body = json.dumps({"v": 2, "id": job.id, "queue": "default"})
        sqs.send_message(QueueUrl=store.queue_urls["default"], MessageBody=body)
        assert await other.claim("default", "w2", time.time(), wait=1) == []
        record = await JobQueue(store).get(enqueued.id)
        assert record is not None
        assert (record.attempts, record.lease_token) == (1, job.lease_token)
        assert await store.complete(job.id, job.lease_token or "", time.time(), "done")
    finally:
        await other.aclose()


async def test_two_workers_with_duplicate_messages_run_the_job_once(
    store: SqsJobStore, aws_endpoint: str, sqs: Any
) -> None:
    other = twin(store, aws_endpoint)
    runs: list[str] = []
    finished = asyncio.Event()

    async def handler(ctx: JobContext) -> None:
        runs.append(ctx.job.lease_token or "")
        await asyncio.sleep(0.5)
        finished.set()

    try:
        enqueued = (await JobQueue(store).enqueue("once", lease=5)).job
        for _ in range(2):
            sqs.send_message(QueueUrl=store.queue_urls["default"], MessageBody=body(enqueued.id))
        workers = [
            JobWorker(JobQueue(s), {"once": handler}, concurrency=2, worker_id=f"w{n}")
            for n, s in enumerate((store, other))
        ]
        for worker in workers:
            worker.start()
        await asyncio.wait_for(finished.wait(), 10)
        await asyncio.sleep(0.3)
        for worker in workers:
            await worker.stop()
        record = await JobQueue(store).get(enqueued.id)
        assert record is not None
        assert (record.status, record.attempts, len(runs)) == (JobStatus.COMPLETED, 1, 1)
    finally:
        await other.aclose()


async def test_a_stale_run_cannot_overwrite_a_newer_attempt(store: SqsJobStore) -> None:
    queue = JobQueue(store)
    await queue.enqueue("slow", lease=1, max_attempts=3)
    [old] = await store.claim("default", "w", time.time())
    await asyncio.sleep(1.3)
    [new] = await store.claim("default", "w", time.time(), wait=1)
    assert (new.id, new.attempts) == (old.id, 2)
    stale = old.lease_token or ""
    now = time.time()
    assert not await store.heartbeat(old.id, stale, now + 30, now)
    assert not await store.fail(old.id, stale, "E: late", now + 1, now)
    assert not await store.fail(old.id, stale, "E: late", None, now)
    assert not await store.release(old.id, stale, "stop", now)
    assert not await store.complete(old.id, stale, now, "late")
    current = await queue.get(new.id)
    assert current is not None
    assert (current.status, current.lease_token, current.last_error) == (
        JobStatus.RUNNING,
        new.lease_token,
        None,
    )
    assert await store.complete(new.id, new.lease_token or "", time.time(), "fresh")
    done = await queue.get(new.id)
    assert done is not None and (done.status, done.result) == (JobStatus.COMPLETED, "fresh")


async def test_messages_for_terminal_or_missing_records_are_deleted_without_a_run(
    store: SqsJobStore, sqs: Any
) -> None:
    queue = JobQueue(store)
    cancelled = (await queue.enqueue("gone")).job
    assert await queue.cancel(cancelled.id)
    url = store.queue_urls["default"]
    sqs.send_message(QueueUrl=url, MessageBody=body("0" * 32))
    ran: list[str] = []
    worker = JobWorker(queue, {"gone": lambda ctx: ran.append(ctx.job.id)})
    assert not await worker.run_once()
    assert not await worker.run_once()
    await store.aclose()  # sends the batched deletes
    assert (ran, depth(sqs, url)) == ([], 0)


async def test_malformed_messages_go_to_the_dlq_and_the_worker_carries_on(
    store: SqsJobStore, sqs: Any, caplog: pytest.LogCaptureFixture
) -> None:
    url = store.queue_urls["default"]
    malformed = [
        "this is not json",
        json.dumps({"id": "x", "queue": "default"}),
        json.dumps({"v": 1, "id": ["x"], "queue": "default", "lease": 30}),
        json.dumps({"v": 1, "id": "x", "queue": "default", "lease": 30, "pad": "p" * 5000}),
    ]
    for text in malformed:
        sqs.send_message(QueueUrl=url, MessageBody=text)
    done = asyncio.Event()
    queue = JobQueue(store)
    enqueued = (await queue.enqueue("good")).job
    worker = JobWorker(queue, {"good": lambda ctx: None}, on_complete=lambda job: done.set())
    with caplog.at_level(logging.WARNING, logger="sqsjobs"):
        worker.start()
        await asyncio.wait_for(done.wait(), 10)
        await worker.stop()
    record = await queue.get(enqueued.id)
    assert record is not None and record.status is JobStatus.COMPLETED
    removed = [r for r in caplog.records if getattr(r, "event", "") == "jobs.malformed_message"]
    assert len(removed) == len(malformed)
    dead_letters = store.dead_letter_queue_urls["default"]
    received = sqs.receive_message(QueueUrl=dead_letters, MaxNumberOfMessages=10)
    assert sorted(m["Body"] for m in received["Messages"]) == sorted(malformed)
    await store.aclose()  # sends the finished job's batched delete
    assert depth(sqs, url) == 0


async def test_a_lease_ending_on_the_final_attempt_sends_the_job_to_the_dlq(
    store: SqsJobStore, sqs: Any
) -> None:
    enqueued = (await JobQueue(store).enqueue("crashy", lease=1, max_attempts=1)).job
    [job] = await store.claim("default", "w", time.time())  # ...and the worker dies
    await asyncio.sleep(1.3)
    assert await store.claim("default", "w", time.time(), wait=1) == []
    record = await JobQueue(store).get(enqueued.id)
    assert record is not None
    assert (record.status, record.last_error) == (JobStatus.DEAD, LEASE_EXPIRED_ERROR)
    dead_letters = store.dead_letter_queue_urls["default"]
    [copy] = sqs.receive_message(QueueUrl=dead_letters)["Messages"]
    assert json.loads(copy["Body"])["id"] == job.id
    assert depth(sqs, store.queue_urls["default"]) == 0


async def test_a_message_redriven_to_the_dlq_is_reconciled_to_dead(
    aws_endpoint: str, prefix: str, sqs: Any
) -> None:
    store = SqsJobStore.create(
        prefix, max_receive_count=1, endpoint_url=aws_endpoint, clock_skew=SKEW
    )
    try:
        enqueued = (await JobQueue(store).enqueue("oom", lease=1, max_attempts=5)).job
        [job] = await store.claim("default", "w", time.time())  # ...the process runs out of memory
        await asyncio.sleep(1.3)
        # The second receive is past maxReceiveCount: SQS moves the message to the DLQ.
        assert await store.claim("default", "w", time.time(), wait=1) == []
        dead_letters = store.dead_letter_queue_urls["default"]
        assert depth(sqs, dead_letters) == 1
        record = await JobQueue(store).get(enqueued.id)
        assert record is not None and record.status is JobStatus.RUNNING
        report = await store.reconcile(grace=60)
        assert (report.dead, report.resent) == (1, 0)
        record = await JobQueue(store).get(job.id)
        assert record is not None
        assert record.status is JobStatus.DEAD
        assert "dead-letter queue" in (record.last_error or "")
        assert depth(sqs, dead_letters) == 1  # kept for inspection and redrive
        assert (await store.reconcile(grace=60)).dead == 0
    finally:
        await store.aclose()


async def test_a_cancelled_long_poll_spends_no_attempt(store: SqsJobStore) -> None:
    queue = JobQueue(store)
    await queue.enqueue("warm", lease=1)  # teaches the store this queue's one-second leases
    [warm] = await store.claim("default", "w", time.time())
    assert await store.complete(warm.id, warm.lease_token or "", time.time(), None)
    polling = asyncio.create_task(store.claim("default", "w", time.time(), wait=3))
    await asyncio.sleep(0.2)
    polling.cancel()
    with pytest.raises(asyncio.CancelledError):
        await polling
    # SQS may still hand this job to the abandoned poll: the store hands it back to the
    # queue, unclaimed (test_cancelled_claims.py), its attempt unspent.
    enqueued = (await queue.enqueue("next", lease=1)).job
    await asyncio.sleep(1.5)
    [job] = await store.claim("default", "w", time.time(), wait=1)
    assert (job.id, job.attempts) == (enqueued.id, 1)


async def test_a_refused_heartbeat_ends_the_claim(store: SqsJobStore, sqs: Any) -> None:
    """Its run records nothing after it: the next claim owns the job and its message."""
    await JobQueue(store).enqueue("short", lease=1)
    [job] = await store.claim("default", "w", time.time())
    token = job.lease_token or ""
    await asyncio.sleep(1.2)
    now = time.time()
    assert not await store.heartbeat(job.id, token, now + 1, now)
    [again] = await store.claim("default", "w2", time.time(), wait=2)
    assert (again.id, again.attempts) == (job.id, 2)
    assert not await store.complete(job.id, token, time.time(), "stale")
    assert await store.complete(again.id, again.lease_token or "", time.time(), "fresh")
    await store.aclose()  # sends the batched delete of the message
    assert depth(sqs, store.queue_urls["default"]) == 0
