"""Cron: validation at construction, tick arithmetic, and one job per tick across replicas."""

from __future__ import annotations

import asyncio
import math
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from sqsjobs import Cron, JobConfigError, JobQueue, JobRegistry, JobWorker, MemoryJobStore


def at(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"schedule": "61 * * * *"}, "invalid_option"),
        ({"schedule": "* * * * * *"}, "invalid_option"),  # six fields: seconds are not allowed
        ({"schedule": "* * *"}, "invalid_option"),
        ({"timezone": "Mars/Olympus"}, "invalid_option"),
        ({"timezone": "America"}, "invalid_option"),  # a directory of zones, not a zone
        ({"options": {"idempotency_key": "k"}}, "invalid_option"),
        ({"options": {"name": "other"}}, "invalid_option"),
        ({"options": {"payload": {}}}, "invalid_option"),
        ({"options": {"retries": 3}}, "invalid_option"),
        ({"name": "bad name"}, "invalid_name"),
        ({"payload": {1: "x"}}, "invalid_payload"),
    ],
)
def test_invalid_cron_is_refused_at_construction(arguments: dict[str, Any], code: str) -> None:
    values: dict[str, Any] = {"schedule": "*/5 * * * *", "name": "reports.nightly"} | arguments
    with pytest.raises(JobConfigError) as raised:
        Cron(**values)
    assert raised.value.code == code
    assert "must" in str(raised.value) or "allowed" in str(raised.value).lower()


def test_options_are_frozen_and_become_enqueue_arguments() -> None:
    options = {"queue": "reports", "priority": 5}
    cron = Cron("0 3 * * *", "reports.nightly", {"full": True}, options=options)
    options["priority"] = 9
    request = cron.request(at("2026-05-01T03:00:00+00:00"))
    assert (request.queue, request.priority, request.payload) == ("reports", 5, {"full": True})
    assert request.idempotency_key == "cron/reports.nightly/2026-05-01T03:00:00Z"
    with pytest.raises(TypeError):
        cron.options["priority"] = 1  # type: ignore[index]


def test_next_tick_is_strictly_after_and_follows_the_timezone() -> None:
    every_five = Cron("*/5 * * * *", "a")
    assert every_five.next_tick(at("2026-01-01T00:05:00+00:00")) == at("2026-01-01T00:10:00+00:00")
    assert every_five.next_tick(at("2026-01-01T00:05:01+00:00")) == at("2026-01-01T00:10:00+00:00")
    berlin = Cron("0 3 * * *", "a", timezone="Europe/Berlin")
    assert berlin.next_tick(at("2026-01-10T12:00:00+00:00")) == at("2026-01-11T02:00:00+00:00")
    assert berlin.next_tick(at("2026-07-10T12:00:00+00:00")) == at("2026-07-11T01:00:00+00:00")


def test_a_missed_tick_is_not_replayed() -> None:
    hourly = Cron("0 * * * *", "a")
    back_after_downtime = at("2026-01-01T05:30:00+00:00")  # 01:00 … 05:00 were missed
    assert hourly.next_tick(back_after_downtime) == at("2026-01-01T06:00:00+00:00")


async def test_replicas_with_the_same_cron_enqueue_one_job_per_tick() -> None:
    next_minute = math.floor(time.time() / 60 + 1) * 60
    offset = next_minute - 0.3 - time.time()  # the next tick is 0.3 s of real time away

    def clock() -> float:
        return time.time() + offset

    queue = JobQueue(MemoryJobStore(clock=clock), clock=clock)
    cron = [Cron("* * * * *", "reports.minutely", {"kind": "summary"})]
    handlers = {"reports.minutely": lambda ctx: None}
    replicas = [JobWorker(queue, handlers, cron=cron, queues=["nowhere"]) for _ in range(3)]
    for worker in replicas:
        worker.start()
    await asyncio.sleep(0.8)
    for worker in replicas:
        await worker.stop()
    page = await queue.list(name="reports.minutely")
    stamp = datetime.fromtimestamp(next_minute, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert [(j.idempotency_key, j.payload) for j in page.jobs] == [
        (f"cron/reports.minutely/{stamp}", {"kind": "summary"})
    ]


def test_a_worker_without_the_handler_of_its_cron_is_refused() -> None:
    """Every tick of it would die: a typo or the wrong registry, caught at construction."""
    queue = JobQueue(MemoryJobStore())
    registry = JobRegistry()
    registry.add("reports.daily", lambda ctx: None)
    registry.cron("0 3 * * *", "reports.dialy")
    with pytest.raises(JobConfigError) as refused:
        JobWorker(queue, registry, cron=[Cron("* * * * *", "reports.hourly")])
    assert refused.value.code == "invalid_option"
    assert "'reports.dialy', 'reports.hourly' has no handler in this worker" in str(refused.value)
    assert "(handlers: reports.daily)" in str(refused.value)
