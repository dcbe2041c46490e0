"""The scheduled cron function of Lambda-only deployments, against the emulator's store.

EventBridge invokes it every minute with a scheduled event whose ``time`` is the
scheduled instant; these tests pass such events for minutes just past, as a late,
repeated or missed invocation would see them.
"""

from __future__ import annotations

import logging
import math
import time
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from botocore.exceptions import ClientError

from sqsjobs import Cron, JobConfigError, JobRegistry, JobStoreError, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_cron_handler

MINUTE = 60.0


def stamp(instant: float) -> str:
    return datetime.fromtimestamp(instant, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def scheduled_event(instant: float) -> dict[str, Any]:
    """What an EventBridge schedule delivers (the fields the handler may read, and more)."""
    return {
        "version": "0",
        "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "123456789012",
        "time": stamp(instant),
        "region": "eu-central-1",
        "resources": ["arn:aws:events:eu-central-1:123456789012:rule/jobs-cron"],
        "detail": {},
    }


def keys(store: SqsJobStore, name: str) -> list[str]:
    jobs = SyncJobQueue(store).list(name=name, limit=100).jobs
    return sorted(str(job.idempotency_key) for job in jobs)


def minutes_ago(count: int) -> float:
    return math.floor(time.time() / MINUTE) * MINUTE - count * MINUTE


def test_each_invocation_enqueues_the_ticks_of_its_lookback_once(store: SqsJobStore) -> None:
    start = minutes_ago(6)
    cron = Cron("* * * * *", "ledger.snapshot", {"desk": "Zürich"}, options={"priority": 3})
    handler = make_cron_handler(store=store, crons=[cron], lookback=300)

    assert handler(scheduled_event(start), None) == {"enqueued": 5, "duplicates": 0}
    assert handler(scheduled_event(start), None) == {"enqueued": 0, "duplicates": 5}  # again
    assert handler(scheduled_event(start + MINUTE), None) == {"enqueued": 1, "duplicates": 4}
    # The invocations of start + 2 and + 3 minutes never came: the next one catches up.
    assert handler(scheduled_event(start + 4 * MINUTE), None) == {"enqueued": 3, "duplicates": 2}

    ticks = [start + minute * MINUTE for minute in range(-4, 5)]
    assert keys(store, "ledger.snapshot") == [f"cron/ledger.snapshot/{stamp(t)}" for t in ticks]
    job = SyncJobQueue(store).list(name="ledger.snapshot", limit=1).jobs[0]
    assert (job.payload, job.priority, job.queue) == ({"desk": "Zürich"}, 3, "default")


def test_the_schedule_is_read_in_the_crons_timezone_and_keyed_in_utc(store: SqsJobStore) -> None:
    tick = minutes_ago(2)
    local = datetime.fromtimestamp(tick, ZoneInfo("Asia/Kolkata"))  # UTC+05:30
    schedule = f"{local.minute} {local.hour} * * *"
    kolkata = Cron(schedule, "payroll.close", timezone="Asia/Kolkata")
    in_utc = Cron(schedule, "payroll.close.utc")
    handler = make_cron_handler(store=store, crons=[kolkata, in_utc])
    assert handler(scheduled_event(tick + 30), None) == {"enqueued": 1, "duplicates": 0}
    assert keys(store, "payroll.close") == [f"cron/payroll.close/{stamp(tick)}"]
    assert keys(store, "payroll.close.utc") == []


def test_without_a_time_or_ahead_of_the_clock_the_span_ends_now(store: SqsJobStore) -> None:
    registry = JobRegistry()
    registry.cron("* * * * *", "cache.warm", {"tenant": "ünïcode"})
    handler = make_cron_handler(store=store, registry=registry, lookback=120)
    before = time.time()
    assert handler({}, None) == {"enqueued": 2, "duplicates": 0}  # (now - 120 s, now]
    assert sum(handler({"time": "not a time"}, None).values()) == 2
    assert sum(handler(scheduled_event(time.time() + 3600), None).values()) == 2
    latest = max(keys(store, "cache.warm"))
    assert latest <= f"cron/cache.warm/{stamp(time.time())}"  # nothing enqueued ahead of time
    assert latest >= f"cron/cache.warm/{stamp(before - MINUTE)}"


def test_a_tick_enqueued_before_its_payload_changed_counts_as_there(store: SqsJobStore) -> None:
    """A deploy changed the cron's payload: the ticks before it keep the jobs they have."""
    tick = minutes_ago(1)
    before = make_cron_handler(store=store, crons=[Cron("* * * * *", "report.daily", {"v": 1})])
    after = make_cron_handler(store=store, crons=[Cron("* * * * *", "report.daily", {"v": 2})])
    assert before(scheduled_event(tick), None) == {"enqueued": 5, "duplicates": 0}
    assert after(scheduled_event(tick + MINUTE), None) == {"enqueued": 1, "duplicates": 4}
    jobs = SyncJobQueue(store).list(name="report.daily", limit=100).jobs
    newest = max(jobs, key=lambda job: str(job.idempotency_key))
    assert (len(jobs), newest.payload) == (6, {"v": 2})


def test_every_tick_is_tried_and_a_failure_fails_the_invocation(
    store: SqsJobStore, aws_endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    misnamed = SqsJobStore(
        table_name=f"{store.table_name}-typo",
        queue_urls=store.queue_urls,
        endpoint_url=aws_endpoint,
    )
    crons = [Cron("* * * * *", "report.daily"), Cron("*/30 * * * *", "index.rebuild")]
    handler = make_cron_handler(store=misnamed, crons=crons, lookback=60)
    tick = math.floor(time.time() / 1800) * 1800.0  # both crons tick then
    with caplog.at_level(logging.ERROR, logger="sqsjobs"), pytest.raises(JobStoreError) as raised:
        handler(scheduled_event(tick), None)
    failures = [
        r.getMessage() for r in caplog.records if getattr(r, "event", "") == "jobs.cron_failed"
    ]
    assert [text.split(": ")[0] for text in failures] == [
        f"Cron 'report.daily' could not enqueue its tick {stamp(tick)}",
        f"Cron 'index.rebuild' could not enqueue its tick {stamp(tick)}",
    ]
    assert str(raised.value) in failures[0]
    assert raised.value.code == "ResourceNotFoundException"
    assert isinstance(raised.value.__cause__, ClientError)


@pytest.mark.parametrize("lookback", [59.0, 3601.0, float("nan"), True, "300"])
def test_lookback_spans_a_minute_to_an_hour(store: SqsJobStore, lookback: Any) -> None:
    with pytest.raises(ValueError, match="lookback must be a finite number of seconds >= 60"):
        make_cron_handler(store=store, crons=[Cron("* * * * *", "a")], lookback=lookback)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "has no crons: pass crons="),
        ({"registry": JobRegistry()}, "has no crons"),
        ({"registry": {"a": print}}, "registry must be a JobRegistry"),
        ({"crons": ["* * * * * a"]}, "takes Cron values"),
        (
            {"crons": [Cron("* * * * *", "a", options={"queue": "reports"})]},
            "enqueues to queue 'reports', which this store lacks; its queues are default",
        ),
        (
            {"crons": [Cron("0 3 * * *", "a", {"blob": "ü" * 40_000})]},
            "payload",
        ),
    ],
)
def test_a_handler_without_usable_crons_is_refused_when_made(
    store: SqsJobStore, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(JobConfigError, match=message):
        make_cron_handler(store=store, **arguments)
