"""Jobs that wait longer than SQS keeps a message: hops, the reconciler, and payloads.

SQS delays a message 15 minutes at most and drops any message older than the queue's
``MessageRetentionPeriod`` (4 days on these queues), so a job due 60 days ahead lives on
its record, and its message survives only by hopping: each receive before it is due
hides it again, or re-sends a fresh one as it nears its retention. Without a receive in
time, SQS drops it, and only a reconciler (or a duplicate enqueue of its key) sends
another. These tests show what then happens to the job, its record and its body item.

The emulator's SQS keeps real time, so the tests play SQS's clock for it: a message SQS
delivers after its delay or a hide is a token the test sends (``arrive``; the message it
stands for stays delayed or hidden in the emulator beyond the test's end), one SQS drops
at the end of its retention is purged, and the stores' ``AheadClock`` moves the days.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sqsjobs import JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.items import BODY_EXTEND_WITHIN, BODY_LIFE
from sqsjobs.aws.wire.sqs import (
    RETENTION_MARGIN,
    Hide,
    Message,
    QueueInfo,
    body,
    plan_return,
    send_delay,
)
from sqsjobs.testing.payloads import random_document

from ..support.clock import AheadClock
from .conftest import SKEW

DAY = 86_400.0
WAIT = 60 * DAY  # longer than SQS keeps any message (14 days at most)
RETENTION = 345_600.0  # what ``SqsJobStore.create`` and the template give a job queue
DEAD_RETENTION = 1_209_600.0  # the store's default ``dead_retention``
GRACE = 900.0  # the reconciler's default


class Later:
    """A worker's store over the test's table and queues, its clock moved by the test."""

    def __init__(self, made: SqsJobStore, aws_endpoint: str) -> None:
        self.clock = AheadClock()
        self.store = SqsJobStore(
            table_name=made.table_name,
            queue_urls=made.queue_urls,
            endpoint_url=aws_endpoint,
            clock_skew=SKEW,
            clock=self.clock,
        )

    def at(self, instant: float) -> float:
        """Move the clock to ``instant`` (an epoch reading on the test's timeline)."""
        self.clock.offset = instant - time.time()
        return self.clock()


@pytest.fixture
async def later(store: SqsJobStore, aws_endpoint: str) -> AsyncIterator[Later]:
    made = Later(store, aws_endpoint)
    try:
        yield made
    finally:
        await made.store.aclose()


def counts(sqs: Any, url: str) -> tuple[int, int, int]:
    """The queue's messages: visible, hidden (received, not deleted), delayed."""
    names = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ]
    found = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    visible, hidden, delayed = (int(found[name]) for name in names)
    return visible, hidden, delayed


def drop(sqs: Any, url: str) -> None:
    """SQS at the end of the message's retention: it is gone, whatever its state."""
    sqs.purge_queue(QueueUrl=url)
    assert counts(sqs, url) == (0, 0, 0)


def arrive(sqs: Any, url: str, job_id: str) -> None:
    """The job's message as SQS hands it out once its delay or hide is over."""
    sqs.send_message(QueueUrl=url, MessageBody=body(job_id, "default"))


def record(dynamodb: Any, table: str, key: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = dynamodb.get_item(
        TableName=table, Key={"pk": {"S": key}}, ConsistentRead=True
    ).get("Item")
    return found


def long_payload(n: int) -> dict[str, Any]:
    """JSON that no compression brings within the record: it goes to a body item."""
    return {"report": n, **random_document(3_000, seed=n)}


async def test_without_a_receive_in_time_the_job_never_runs_and_its_record_stays(
    store: SqsJobStore, later: Later, sqs: Any, dynamodb: Any
) -> None:
    """No reconciler, and no worker receives the queue for longer than its retention."""
    job = (await JobQueue(store).enqueue("report.quarterly", {"q": 3}, delay=WAIT)).job
    run_at, url = job.run_at.timestamp(), store.queue_urls["default"]
    assert job.status is JobStatus.DELAYED
    assert counts(sqs, url) == (0, 0, 1)  # one message, SQS's 15 minutes of delay at most
    item = record(dynamodb, store.table_name, f"job#{job.id}")
    assert item is not None and "expires_at" not in item  # a waiting record never expires

    drop(sqs, url)  # 4 days on, nobody has received it: SQS drops it

    for instant in (run_at + 1.0, run_at + GRACE + 1.0, run_at + 365 * DAY):
        now = later.at(instant)
        assert await later.store.claim("default", "w", now, limit=10, wait=0) == []
        stranded = await later.store.get(job.id, now)
        assert stranded is not None
        assert (stranded.status, stranded.attempts) == (JobStatus.DELAYED, 0)
    assert counts(sqs, url) == (0, 0, 0)
    assert record(dynamodb, store.table_name, f"job#{job.id}") == item  # nothing wrote it


async def test_a_reconciler_re_sends_it_once_overdue_by_its_grace_and_it_runs(
    store: SqsJobStore, later: Later, sqs: Any
) -> None:
    job = (await JobQueue(store).enqueue("report.quarterly", {"q": 4}, delay=WAIT)).job
    run_at, url = job.run_at.timestamp(), store.queue_urls["default"]
    drop(sqs, url)

    # Before the job is due, its message may still be hopping: a pass sends nothing.
    for instant in (run_at - 30 * DAY, run_at - 1.0, run_at + GRACE - 5.0):
        later.at(instant)
        report = await later.store.reconcile(grace=GRACE, queues=["default"])
        assert report.resent == 0
    assert counts(sqs, url) == (0, 0, 0)

    later.at(run_at + GRACE + 1.0)
    assert (await later.store.reconcile(grace=GRACE, queues=["default"])).resent == 1
    assert counts(sqs, url) == (1, 0, 0)  # no delay: it is overdue
    now = later.clock()
    (claimed,) = await later.store.claim("default", "w", now, limit=10, wait=1)
    assert (claimed.id, claimed.attempts, claimed.payload) == (job.id, 1, {"q": 4})
    assert await later.store.complete(claimed.id, claimed.lease_token or "", now, None)


async def test_a_worker_receiving_throughout_keeps_it_alive_without_a_reconciler(
    store: SqsJobStore, later: Later, sqs: Any, dynamodb: Any
) -> None:
    """Each receive before the job is due hides its message, or re-sends a fresh one
    when a hide would take it within an hour of its retention; it runs when due."""
    job = (await JobQueue(store).enqueue("report.quarterly", {"q": 1}, delay=WAIT)).job
    run_at, url = job.run_at.timestamp(), store.queue_urls["default"]
    written = record(dynamodb, store.table_name, f"job#{job.id}")
    sent = time.time()  # the test's tokens are sent now: their age is the clock's offset

    assert counts(sqs, url) == (0, 0, 1)  # sent with SQS's longest delay, 15 minutes

    arrive(sqs, url, job.id)  # 15 minutes on, after its delay
    now = later.at(sent + 900.0)
    assert await later.store.claim("default", "w", now, limit=10) == []
    assert counts(sqs, url) == (0, 1, 1)  # hidden for 12 hours: a hop

    # Back from its hide, it is next received 3.5 days after its send (the workers paused
    # meanwhile): a 12-hour hide would take it within an hour of its retention.
    arrive(sqs, url, job.id)
    now = later.at(sent + 3.5 * DAY)
    assert await later.store.claim("default", "w", now, limit=10) == []
    assert counts(sqs, url) == (0, 1, 2)  # a fresh message instead, the old one deleted
    assert record(dynamodb, store.table_name, f"job#{job.id}") == written  # hops write nothing

    arrive(sqs, url, job.id)  # the fresh message's last hop ends when the job is due
    now = later.at(run_at + 0.5)
    (claimed,) = await later.store.claim("default", "w", now, limit=10)
    assert (claimed.id, claimed.attempts) == (job.id, 1)  # no hop spent an attempt
    assert await later.store.complete(claimed.id, claimed.lease_token or "", now, None)


async def test_a_long_payload_outlives_the_wait_as_its_body_counts_from_run_at(
    store: SqsJobStore, later: Later, sqs: Any, dynamodb: Any
) -> None:
    payload = long_payload(1)
    job = (await JobQueue(store).enqueue("report.annual", payload, delay=WAIT)).job
    run_at, url = job.run_at.timestamp(), store.queue_urls["default"]
    item = record(dynamodb, store.table_name, f"job#{job.id}")
    assert item is not None and "body_pk" in item
    body_item = record(dynamodb, store.table_name, item["body_pk"]["S"])
    assert body_item is not None
    until = float(body_item["expires_at"]["N"])
    assert until == float(item["body_until"]["N"])
    assert until == pytest.approx(run_at + BODY_LIFE + DEAD_RETENTION)  # 44 days past run_at

    arrive(sqs, url, job.id)
    now = later.at(run_at + 0.5)
    (claimed,) = await later.store.claim("default", "w", now, limit=10)
    assert claimed.payload == payload
    # 44 days left is more than a claim's margin (15 days plus the dead retention).
    assert until - now > BODY_EXTEND_WITHIN + DEAD_RETENTION
    assert record(dynamodb, store.table_name, item["body_pk"]["S"]) == body_item


async def test_a_stranded_job_found_after_its_bodys_life_is_dead_lettered(
    store: SqsJobStore, later: Later, sqs: Any, dynamodb: Any
) -> None:
    """Its message dropped and no reconciler: the body's TTL runs out 44 days past run_at,
    and a reconciler started after that delivers a job whose payload is gone."""
    job = (await JobQueue(store).enqueue("report.annual", long_payload(2), delay=WAIT)).job
    run_at, url = job.run_at.timestamp(), store.queue_urls["default"]
    drop(sqs, url)
    item = record(dynamodb, store.table_name, f"job#{job.id}")
    assert item is not None
    body_key = {"pk": item["body_pk"]}
    body_item = record(dynamodb, store.table_name, item["body_pk"]["S"])
    assert body_item is not None

    now = later.at(run_at + 45 * DAY)
    assert float(body_item["expires_at"]["N"]) < now
    dynamodb.delete_item(TableName=store.table_name, Key=body_key)  # DynamoDB's TTL did it

    assert (await later.store.reconcile(grace=GRACE, queues=["default"])).resent == 1
    assert await later.store.claim("default", "w", now, limit=10, wait=1) == []
    dead = await later.store.get(job.id, now)
    assert dead is not None and dead.status is JobStatus.DEAD
    assert dead.last_error is not None and "is missing" in dead.last_error


async def test_a_reconciler_keeps_the_body_of_a_stranded_job_alive(
    store: SqsJobStore, later: Later, sqs: Any, dynamodb: Any
) -> None:
    """With a reconciler, a job that no worker claims for weeks past run_at keeps its payload."""
    payload = long_payload(3)
    job = (await JobQueue(store).enqueue("report.annual", payload, delay=WAIT)).job
    run_at, url = job.run_at.timestamp(), store.queue_urls["default"]
    drop(sqs, url)
    item = record(dynamodb, store.table_name, f"job#{job.id}")
    assert item is not None
    written = float(item["body_until"]["N"])

    for days in (16.0, 31.0):  # nobody claims the re-sent messages: no worker serves them
        now = later.at(run_at + days * DAY)
        assert (await later.store.reconcile(grace=GRACE, queues=["default"])).resent == 1
        body_item = record(dynamodb, store.table_name, item["body_pk"]["S"])
        assert body_item is not None
        lives_until = float(body_item["expires_at"]["N"])
        assert lives_until - now >= BODY_EXTEND_WITHIN + DEAD_RETENTION
    assert lives_until > written

    now = later.at(run_at + 50 * DAY)  # past the body's first lifetime
    assert (await later.store.reconcile(grace=GRACE, queues=["default"])).resent == 1
    (claimed,) = await later.store.claim("default", "w", now, limit=10, wait=1)
    assert (claimed.id, claimed.payload) == (job.id, payload)


def longest_safe_gap(delay: float, max_receive_count: int | None, retention: float) -> float:
    """The longest stretch without a receive that a job due ``delay`` ahead survives.

    Plays SQS for the job's message as every hop leaves it: each time it becomes visible,
    a receive must come before the queue's retention drops it.
    """
    info = QueueInfo("q", "dlq", max_receive_count, retention)
    now, run_at = 0.0, delay
    sent_at, receives, visible_at = now, 0, float(send_delay(run_at, now))
    gaps: list[float] = []
    while True:
        gaps.append(sent_at + retention - visible_at)
        now, receives = visible_at, receives + 1
        if now >= run_at:
            return min(gaps)
        message = Message("m", "h", "{}", receives, sent_at)
        plan = plan_return(message, run_at, now, info, hop=True)
        if isinstance(plan, Hide):
            visible_at = now + plan.seconds
        else:
            sent_at, receives, visible_at = now, 0, now + plan.delay


def test_how_long_workers_may_pause_while_a_job_waits_without_a_reconciler() -> None:
    # The defaults (4 days, maxReceiveCount 10): a fresh message every 4 hops.
    assert longest_safe_gap(WAIT, 10, RETENTION) == 47.75 * 3_600
    # Any queue: at least an hour, the margin a hide keeps before the retention.
    for retention in (46_800.0, RETENTION, 1_036_800.0, 14 * DAY):
        for max_receive_count in (1, 5, 10, 100, None):
            gap = longest_safe_gap(WAIT, max_receive_count, retention)
            assert RETENTION_MARGIN <= gap < retention
    # A generous redrive limit leaves the least: hides run until the margin.
    assert longest_safe_gap(WAIT, None, RETENTION) == 4 * 3_600
