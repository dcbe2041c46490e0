"""Delays past SQS's 15 minutes, up to a year: hops spend no attempt and lose no message.

The pure part simulates every receive of a delayed job's message with an injected
clock, as SQS would deliver it, under several redrive limits and retention periods;
the emulator part makes a message arrive early for real and watches it hop.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from sqsjobs import JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.flows.refusals import Refusal, why_refused
from sqsjobs.aws.wire.items import stored_from_item
from sqsjobs.aws.wire.sqs import (
    MAX_DELAY,
    MAX_VISIBILITY,
    Hide,
    Message,
    QueueInfo,
    plan_return,
    send_delay,
)

from .conftest import SKEW, depth
from .fakes import DLQ, NOW, URL, prepared, stored

DAY = 86_400.0


def deliver_until_due(
    delay: float, max_receive_count: int | None, retention: float, *, hop: bool = True
) -> tuple[float, int]:
    """Play SQS for a job due ``delay`` seconds from now; the time it is due, and hops."""
    info = QueueInfo(URL, DLQ, max_receive_count, retention)
    run_at = NOW + delay
    sent_at, receives, hops = NOW, 0, 0
    visible_at = NOW + send_delay(run_at, NOW)
    while True:
        now, receives = visible_at, receives + 1
        assert max_receive_count is None or receives <= max_receive_count, "redriven"
        assert now < sent_at + retention, "dropped by retention"
        if now >= run_at:
            return now, hops
        hops += 1
        plan = plan_return(Message("m", "h", "{}", receives, sent_at), run_at, now, info, hop=hop)
        if isinstance(plan, Hide):
            assert 0 < plan.seconds <= MAX_VISIBILITY
            visible_at = now + plan.seconds
        else:
            assert 0 < plan.delay <= MAX_DELAY
            sent_at, receives, visible_at = now, 0, now + plan.delay


@pytest.mark.parametrize("delay", [901.0, 3_600.5, DAY, 14 * DAY, 365 * DAY])
@pytest.mark.parametrize("max_receive_count", [1, 2, 5, 10, None])
@pytest.mark.parametrize("retention", [3_600.0, 4 * DAY, 14 * DAY])
def test_a_delayed_job_arrives_when_due(
    delay: float, max_receive_count: int | None, retention: float
) -> None:
    arrived, hops = deliver_until_due(delay, max_receive_count, retention)
    assert NOW + delay <= arrived < NOW + delay + 1
    assert hops >= 1


def test_a_year_costs_few_hops_with_a_generous_redrive_limit() -> None:
    _, hops = deliver_until_due(365 * DAY, 10, 14 * DAY)
    # A hop per 12 hours, plus a fresh message every few hops to keep the redrive count low.
    assert hops <= 365 * 2.5


@pytest.mark.parametrize("retention", [13 * 3_600.0, 14 * 3_600.0, 4 * DAY])
def test_a_long_wait_on_a_short_retention_sends_a_fresh_message_twice_a_day(
    retention: float,
) -> None:
    arrived, hops = deliver_until_due(60 * DAY + 1_234.5, 10, retention)
    assert arrived >= NOW + 60 * DAY + 1_234.5
    # A hop per 12 hours at most twice over (a hide, then a fresh message), not one per
    # 15 minutes (5,760 in 60 days on a 13-hour retention).
    assert hops <= 60 * 5


def test_retries_and_releases_never_exhaust_the_redrive_limit() -> None:
    for max_receive_count in (1, 2, 3, 10):
        arrived, _ = deliver_until_due(3 * DAY, max_receive_count, 4 * DAY, hop=False)
        assert arrived >= NOW + 3 * DAY


def test_a_refused_claim_of_a_job_not_yet_due_is_a_hop() -> None:
    job = prepared(delay=DAY).job
    item = stored_from_item(stored(job))
    assert why_refused(item, "default", NOW + 900, 2.0) is Refusal.NOT_DUE
    assert item.job.attempts == 0


@pytest.mark.parametrize("max_receive_count", [2, 10])
async def test_an_early_message_hops_until_due_then_runs_once(
    aws_endpoint: str, prefix: str, sqs: Any, max_receive_count: int
) -> None:
    """Like a message back from its first 15-minute hop, this one arrives before its job."""
    store = SqsJobStore.create(
        prefix, max_receive_count=max_receive_count, endpoint_url=aws_endpoint, clock_skew=SKEW
    )
    try:
        url = store.queue_urls["default"]
        enqueued = (await JobQueue(store).enqueue("later", delay=2.0, lease=1.0)).job
        body = {"v": 1, "id": enqueued.id, "queue": "default", "lease": enqueued.lease}
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps(body))
        assert await store.claim("default", "w", time.time()) == []
        waiting = await JobQueue(store).get(enqueued.id)
        assert waiting is not None
        assert (waiting.status, waiting.attempts) == (JobStatus.DELAYED, 0)
        await asyncio.sleep(2.2)
        [job] = await store.claim("default", "w", time.time(), limit=10, wait=1)
        assert (job.id, job.attempts) == (enqueued.id, 1)
        assert await store.complete(job.id, job.lease_token or "", time.time(), None)
        # Its other message, hidden while the job ran (and the clock-skew margin after
        # it, rounded up to whole seconds), comes back and is discarded.
        await asyncio.sleep(2.2)
        assert await store.claim("default", "w", time.time(), limit=10) == []
        dead_letters = store.dead_letter_queue_urls["default"]
        assert depth(sqs, dead_letters) == 0
    finally:
        await store.aclose()
    assert depth(sqs, url) == 0
