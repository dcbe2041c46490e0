"""The operator calls on the emulator: retry, dead letters, redrive and stats (SPEC §3, §4)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from sqsjobs import JobConfigError, JobContext, JobFatalError, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import DeadLetter, QueueStats, RedriveReport, SqsJobStore

from .conftest import SKEW, depth
from .emulator import COUNTER

DAY = 86_400.0


def poison(ctx: JobContext) -> None:
    raise JobFatalError("the warehouse refused this order")


def fine(ctx: JobContext) -> str:
    return "shipped"


async def dead_job(store: SqsJobStore, name: str = "order.ship", **options: Any) -> str:
    """A job the handler dead-lettered on its first attempt (its DLQ copy sent by the store)."""
    queue = JobQueue(store)
    job = (await queue.enqueue(name, {"order": 7}, **options)).job
    assert await JobWorker(queue, {name: poison}, queues=[job.queue]).run_once()
    record = await queue.get(job.id)
    assert record is not None and record.status is JobStatus.DEAD
    return job.id


async def run_to_completion(store: SqsJobStore, job_id: str) -> None:
    queue = JobQueue(store)
    assert await JobWorker(queue, {"order.ship": fine}).run_once()
    record = await queue.get(job_id)
    assert record is not None
    assert (record.status, record.attempts) == (JobStatus.COMPLETED, 1)


def visible_bodies(sqs: Any, url: str) -> list[str]:
    """Receive (and so hide for a moment) every visible message of ``url``."""
    reply = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=1)
    return [m["Body"] for m in reply.get("Messages", [])]


# -- retry --------------------------------------------------------------------------------


async def test_retry_runs_a_dead_job_again_with_its_attempts_reset(store: SqsJobStore) -> None:
    job_id = await dead_job(store)
    before = COUNTER.counts()
    assert await store.retry(job_id, time.time())
    spent = COUNTER.counts() - before
    # Read; its copy is found in the DLQ (one receive finds it, one no more); revive, send,
    # and the copy leaves the DLQ.
    assert dict(spent.requests) == {
        ("dynamodb", "GetItem"): 1,
        ("dynamodb", "UpdateItem"): 1,
        ("sqs", "SendMessage"): 1,
        ("sqs", "ReceiveMessage"): 2,
        ("sqs", "DeleteMessageBatch"): 1,
    }

    record = await JobQueue(store).get(job_id)
    assert record is not None
    assert (record.status, record.attempts) == (JobStatus.QUEUED, 0)
    assert record.last_error == "JobFatalError: the warehouse refused this order"
    assert record.lease_token is None and record.run_at == record.updated_at
    # The list index moved with it: found under queued, no longer under dead.
    queued = await JobQueue(store).list(status=JobStatus.QUEUED)
    dead = await JobQueue(store).list(status=JobStatus.DEAD)
    assert ([j.id for j in queued.jobs], dead.jobs) == ([job_id], [])
    await run_to_completion(store, job_id)


async def test_retry_leaves_no_copy_in_the_dead_letter_queue(store: SqsJobStore, sqs: Any) -> None:
    other = await dead_job(store)
    job_id = await dead_job(store)
    dead_letters_url = store.dead_letter_queue_urls["default"]
    assert depth(sqs, dead_letters_url) == 2
    assert await store.retry(job_id, time.time())
    assert [letter.job_id for letter in await store.dead_letters()] == [other]
    [stats] = await store.stats(["default"])
    assert stats.dead_letter_messages == 1
    # It dies again: the DLQ holds one copy of it, not two.
    assert await JobWorker(JobQueue(store), {"order.ship": poison}).run_once()
    letters = sorted(str(letter.job_id) for letter in await store.dead_letters())
    assert letters == sorted([other, job_id])


async def test_retry_refuses_unknown_expired_and_live_jobs(store: SqsJobStore) -> None:
    job_id = await dead_job(store)
    now = time.time()
    assert not await store.retry("0" * 32, now)
    assert not await store.retry(job_id, now + 15 * DAY)  # past its dead_retention (14 days)
    assert store.sync.retry(job_id, now)
    assert not store.sync.retry(job_id, now)  # queued now: nothing to retry
    record = await JobQueue(store).get(job_id)
    assert record is not None and record.status is JobStatus.QUEUED


async def test_retry_in_a_store_without_the_job_s_queue_writes_nothing(
    store: SqsJobStore, aws_endpoint: str
) -> None:
    job_id = await dead_job(store, queue="other")
    elsewhere = SqsJobStore(
        table_name=store.table_name,
        queue_urls={"default": store.queue_urls["default"]},
        endpoint_url=aws_endpoint,
    )
    try:
        with pytest.raises(JobConfigError, match="'other' has no SQS queue in this store"):
            elsewhere.sync.retry(job_id, time.time())
    finally:
        elsewhere.close()
    record = await JobQueue(store).get(job_id)
    assert record is not None and record.status is JobStatus.DEAD


# -- dead letters and redrive ---------------------------------------------------------------


async def test_a_dead_job_is_listed_then_redriven_and_completed(
    store: SqsJobStore, sqs: Any
) -> None:
    job_id = await dead_job(store)
    dead_letters_url = store.dead_letter_queue_urls["default"]

    [letter] = await store.dead_letters()
    assert isinstance(letter, DeadLetter)
    assert (letter.queue, letter.job_id) == ("default", job_id)
    assert letter.job is not None and letter.job.status is JobStatus.DEAD
    assert letter.receive_count == 1
    assert abs(letter.sent_at.timestamp() - time.time()) < 60
    assert len(visible_bodies(sqs, dead_letters_url)) == 1  # a peek removes nothing

    await asyncio.sleep(1.1)  # visible again after the line above looked
    seen: list[RedriveReport] = []
    before = COUNTER.counts()
    report = await store.redrive(on_progress=seen.append)
    spent = COUNTER.counts() - before
    assert report == RedriveReport(redriven=1, discarded=0, skipped=0)
    assert seen == [report]
    assert depth(sqs, dead_letters_url) == 0
    assert spent.requests == {
        ("sqs", "ReceiveMessage"): 3,  # default: a batch, then empty; other: empty
        ("dynamodb", "GetItem"): 1,
        ("dynamodb", "UpdateItem"): 1,
        ("sqs", "SendMessageBatch"): 1,
        ("sqs", "DeleteMessageBatch"): 1,
    }
    record = await JobQueue(store).get(job_id)
    assert record is not None and (record.status, record.attempts) == (JobStatus.QUEUED, 0)
    await run_to_completion(store, job_id)


async def test_a_message_moved_by_the_redrive_policy_is_shown_dead_then_redriven(
    aws_endpoint: str, prefix: str, sqs: Any
) -> None:
    store = SqsJobStore.create(
        prefix, max_receive_count=1, endpoint_url=aws_endpoint, clock_skew=SKEW
    )
    try:
        enqueued = (await JobQueue(store).enqueue("order.ship", lease=1, max_attempts=5)).job
        [job] = await store.claim("default", "w", time.time())  # ...the process runs out of memory
        await asyncio.sleep(1.3)
        # The second receive is past maxReceiveCount: SQS moves the message to the DLQ.
        assert await store.claim("default", "w", time.time(), wait=1) == []
        record = await JobQueue(store).get(enqueued.id)
        assert record is not None and record.status is JobStatus.RUNNING

        [letter] = store.sync.dead_letters("default")
        assert letter.job_id == job.id and letter.job is not None
        assert letter.job.status is JobStatus.DEAD
        assert "moved to the dead-letter queue after maxReceiveCount 1" in (
            letter.job.last_error or ""
        )
        assert letter.receive_count == 2  # its receive on the job queue, and this peek's
        assert (await store.reconcile(grace=60)).dead == 0  # already settled

        assert store.sync.redrive() == RedriveReport(redriven=1, discarded=0, skipped=0)
        await run_to_completion(store, job.id)
    finally:
        await store.aclose()


async def test_a_waiting_job_s_message_moved_by_the_redrive_policy_is_sent_back(
    aws_endpoint: str, prefix: str, sqs: Any
) -> None:
    """Received twice but never claimed: no run died, so the job is not dead, only lost."""
    store = SqsJobStore.create(
        prefix, max_receive_count=1, endpoint_url=aws_endpoint, clock_skew=SKEW
    )
    try:
        enqueued = (await JobQueue(store).enqueue("order.ship")).job
        url = store.queue_urls["default"]
        assert len(visible_bodies(sqs, url)) == 1
        await asyncio.sleep(1.1)
        assert visible_bodies(sqs, url) == []  # moved to the DLQ on this receive

        [letter] = await store.dead_letters()
        assert letter.job is not None and letter.job.status is JobStatus.QUEUED
        assert await store.redrive() == RedriveReport(redriven=1, discarded=0, skipped=0)
        assert depth(sqs, store.dead_letter_queue_urls["default"]) == 0
        await run_to_completion(store, enqueued.id)
    finally:
        await store.aclose()


async def test_redrive_skips_malformed_messages_and_discards_finished_or_missing_jobs(
    store: SqsJobStore, sqs: Any
) -> None:
    dead_letters_url = store.dead_letter_queue_urls["default"]
    first = await dead_job(store)
    assert store.sync.retry(first, time.time())
    await run_to_completion(store, first)
    # A copy the retry did not reach (past its sweep limit) now names a completed job.
    stray = json.dumps({"v": 2, "id": first, "queue": "default"})
    sqs.send_message(QueueUrl=dead_letters_url, MessageBody=stray)
    second = await dead_job(store)
    sqs.send_message(QueueUrl=dead_letters_url, MessageBody="not a delivery token")
    missing = json.dumps({"v": 1, "id": "f" * 32, "queue": "default", "lease": 30})
    sqs.send_message(QueueUrl=dead_letters_url, MessageBody=missing)

    letters = {letter.job_id: letter for letter in await store.dead_letters()}
    assert set(letters) == {first, second, "f" * 32, None}
    assert letters[None].job is None and letters["f" * 32].job is None
    first_job, second_job = letters[first].job, letters[second].job
    assert first_job is not None and first_job.status is JobStatus.COMPLETED
    assert second_job is not None and second_job.status is JobStatus.DEAD

    report = await store.redrive("default")
    assert report == RedriveReport(redriven=1, discarded=2, skipped=1)
    assert visible_bodies(sqs, dead_letters_url) == ["not a delivery token"]  # back at once
    await run_to_completion(store, second)


async def test_redrive_stops_at_its_limit(store: SqsJobStore, sqs: Any) -> None:
    for _ in range(3):
        await dead_job(store)
    assert await store.redrive(limit=2) == RedriveReport(redriven=2, discarded=0, skipped=0)
    assert depth(sqs, store.dead_letter_queue_urls["default"]) == 1
    [still_dead] = (await JobQueue(store).list(status=JobStatus.DEAD)).jobs
    assert [letter.job_id for letter in await store.dead_letters()] == [still_dead.id]


async def test_bad_limits_and_unknown_queues_are_refused_before_any_request(
    store: SqsJobStore,
) -> None:
    with pytest.raises(JobConfigError, match="limit"):
        await store.dead_letters(limit=0)
    with pytest.raises(JobConfigError, match="limit"):
        await store.redrive(limit=0)
    with pytest.raises(JobConfigError, match="'nowhere' has no SQS queue"):
        await store.stats(["nowhere"])


# -- stats --------------------------------------------------------------------------------


async def test_stats_counts_every_status_and_leaves_expired_records_out(
    store: SqsJobStore, sqs: Any, aws_endpoint: str
) -> None:
    queue = JobQueue(store)
    running = (await queue.enqueue("order.ship")).job
    assert [j.id for j in await store.claim("default", "w", time.time())] == [running.id]
    await queue.enqueue("order.pack")
    assert await JobWorker(queue, {"order.pack": lambda ctx: None}).run_once()
    await dead_job(store)
    for n in range(2):
        await queue.enqueue("order.ship", {"n": n})
    await queue.enqueue("order.ship", delay=600)
    await queue.cancel((await queue.enqueue("order.ship")).job.id)
    await queue.enqueue("order.ship", queue="other")
    await store.aclose()  # sends the completed job's batched delete

    before = COUNTER.counts()
    found = store.sync.stats()
    spent = COUNTER.counts() - before
    assert [replace(each, ended_since=None, oldest_queued_at=None) for each in found] == [
        QueueStats(
            "default",
            counts(2, 1, 1, 1, 1, 1),
            3,
            1,
            1,
            1,
            workers=0,
            waiting_names={"order.ship": 3},
        ),
        QueueStats(
            "other",
            counts(1, 0, 0, 0, 0, 0),
            1,
            0,
            0,
            0,
            workers=0,
            waiting_names={"order.ship": 1},
        ),
    ]
    since = {each.ended_since for each in found}
    assert len(since) == 1 and time.time() - 3600 - 60 < since.pop().timestamp() < time.time()
    assert all(each.oldest_queued_at is not None for each in found)
    # Per queue one query per shard of by_queue's open partitions and of each terminal
    # status's; one fetch of every open job's record; one query of the presence records
    # (none live: no item to fetch).
    assert spent.requests == {
        ("dynamodb", "Query"): 2 * 4 * 4 + 1,
        ("dynamodb", "BatchGetItem"): 1,
        ("sqs", "GetQueueAttributes"): 4,
    }

    # Two hours on, every ended job is older than the window; waiting and running
    # records are counted however old.
    later = SqsJobStore(
        table_name=store.table_name,
        queue_urls=store.queue_urls,
        endpoint_url=aws_endpoint,
        clock=clock_at(7_200),
    )
    try:
        [default] = await later.stats(["default"])
    finally:
        await later.aclose()
    assert default.counts == counts(2, 1, 1, 0, 0, 0)
    assert default.dead_letter_messages == 1


async def test_stats_leaves_out_ended_records_past_their_retention(
    store: SqsJobStore, aws_endpoint: str
) -> None:
    """Expired records are absent whether or not TTL has deleted them; dead ones are kept
    longer (``dead_retention``)."""
    brief = SqsJobStore(
        table_name=store.table_name,
        queue_urls=store.queue_urls,
        endpoint_url=aws_endpoint,
        retention=30.0,
    )
    queue = JobQueue(brief)
    await queue.enqueue("order.pack")
    assert await JobWorker(queue, {"order.pack": lambda ctx: None}).run_once()
    await dead_job(brief)
    await queue.cancel((await queue.enqueue("order.ship")).job.id)
    await brief.aclose()
    for later_by, terminal in ((0.0, (1, 1, 1)), (60.0, (0, 1, 0))):
        later = SqsJobStore(
            table_name=store.table_name,
            queue_urls=store.queue_urls,
            endpoint_url=aws_endpoint,
            clock=clock_at(later_by),
        )
        try:
            [default] = await later.stats(["default"])
        finally:
            await later.aclose()
        assert default.counts == counts(0, 0, 0, *terminal)


def clock_at(offset: float) -> Callable[[], float]:
    return lambda: time.time() + offset


def counts(
    queued: int, delayed: int, running: int, completed: int, dead: int, cancelled: int
) -> dict[JobStatus, int]:
    return {
        JobStatus.WAITING: 0,  # none of these jobs waits for others
        JobStatus.QUEUED: queued,
        JobStatus.DELAYED: delayed,
        JobStatus.RUNNING: running,
        JobStatus.COMPLETED: completed,
        JobStatus.DEAD: dead,
        JobStatus.CANCELLED: cancelled,
    }


async def test_a_dead_record_outlives_its_dead_letter_copy(store: SqsJobStore) -> None:
    """SQS keeps a DLQ message up to 14 days; a redrive on day 13 still finds the job."""
    job_id = await dead_job(store)
    assert await store.retry(job_id, time.time() + 13 * DAY)
