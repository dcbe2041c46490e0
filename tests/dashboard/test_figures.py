"""The dashboard's figures, computed from records: throughput buckets, ages, timelines."""

from __future__ import annotations

from datetime import UTC, datetime

from sqsjobs import EnqueueRequest, Job, JobStatus
from sqsjobs.contrib.dashboard._figures import (
    BUCKETS,
    age,
    counts,
    instant,
    relative,
    throughput,
    timeline,
)
from sqsjobs.core.times import utc
from sqsjobs.producer.enqueue import prepare
from tests.support.clock import REALISTIC_START
from tests.support.config import make_config

NOW = REALISTIC_START + 0.731


def finished(queue: str, status: JobStatus, seconds_ago: float) -> Job:
    job = prepare(make_config(), EnqueueRequest(name="email.send", queue=queue), NOW - 7200).job
    at = utc(NOW - seconds_ago)
    completed_at = at if status is JobStatus.COMPLETED else None
    return job.model_copy(update={"status": status, "updated_at": at, "completed_at": completed_at})


def test_throughput_counts_the_last_hour_in_five_minute_buckets() -> None:
    jobs = [
        finished("default", JobStatus.COMPLETED, 10.5),  # newest bucket
        finished("default", JobStatus.COMPLETED, 299.0),  # still the newest
        finished("default", JobStatus.DEAD, 301.0),  # the one before
        finished("default", JobStatus.COMPLETED, 3599.0),  # oldest bucket
        finished("default", JobStatus.COMPLETED, 3601.0),  # outside the hour
        finished("default", JobStatus.CANCELLED, 20.0),  # cancelled: not throughput
        finished("mail", JobStatus.COMPLETED, 1800.25),
    ]
    rates = throughput(jobs, NOW)
    default = rates["default"]
    assert (default.completed, default.dead) == (3, 1)
    assert default.buckets == (1,) + (0,) * 9 + (1, 2)
    assert default.heights() == [50] + [0] * 9 + [50, 100]
    assert default.per_minute == 4 / 60
    assert rates["mail"].buckets == (0,) * 5 + (1,) + (0,) * (BUCKETS - 6)  # 30 min ago
    assert set(rates) == {"default", "mail"}


def test_counts_give_every_status_of_every_queue_seen() -> None:
    jobs = [finished("default", JobStatus.DEAD, 5), finished("other", JobStatus.COMPLETED, 5)]
    found = counts(jobs)
    assert found["default"][JobStatus.DEAD] == 1 and found["default"][JobStatus.QUEUED] == 0
    assert sum(found["other"].values()) == 1 and len(found["other"]) == len(JobStatus)


def test_ages_read_at_a_glance() -> None:
    assert [age(s) for s in (0.4, 59.9, 60, 423.7, 11_100, 200_000)] == [
        "0s",
        "59s",
        "1m 00s",
        "7m 03s",
        "3h 05m",
        "2d 07h",
    ]
    assert relative(utc(NOW - 42.2), NOW) == "42s ago"
    assert relative(utc(NOW + 30.9), NOW) == "in 30s"
    assert relative(None, NOW) == ""


def test_instants_are_utc_to_the_millisecond() -> None:
    at = datetime(2026, 11, 30, 17, 4, 5, 987_654, tzinfo=UTC)
    assert instant(at) == "2026-11-30 17:04:05.987 UTC"
    assert instant(None) == ""


def test_a_timeline_is_in_the_order_things_happened() -> None:
    job = finished("default", JobStatus.COMPLETED, 60)
    job = job.model_copy(update={"run_at": utc(NOW - 3600)})
    labels = [moment.label for moment in timeline(job)]
    assert labels == ["created", "due (run_at)", "updated", "completed"]
