"""Crons declared on a registry: checked at declaration, run by every worker built from it."""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime
from typing import Any

import pytest

from sqsjobs import (
    Cron,
    JobConfigError,
    JobQueue,
    JobRegistry,
    JobStatus,
    JobWorker,
    MemoryJobStore,
)

from ..support.clock import REALISTIC_START, FakeClock, beyond_microseconds

MINUTE_AFTER_START = math.floor(REALISTIC_START / 60 + 1) * 60
TICK_KEY = "cron/reports.digest/" + datetime.fromtimestamp(MINUTE_AFTER_START, UTC).strftime(
    "%Y-%m-%dT%H:%M:%SZ"
)


@pytest.mark.parametrize(
    ("arguments", "options", "code", "allowed"),
    [
        (("61 * * * *", "reports.digest"), {}, "invalid_option", "minute field '61'"),
        (("0 25 * * *", "reports.digest"), {}, "invalid_option", "hour field '25'"),
        (("0 3 32 * *", "reports.digest"), {}, "invalid_option", "day-of-month field '32'"),
        (("0 3 * 13 *", "reports.digest"), {}, "invalid_option", "allowed are 1-12 or JAN-DEC"),
        (("0 3 * * MOON", "reports.digest"), {}, "invalid_option", "day-of-week field 'MOON'"),
        (("0 3 * * * *", "reports.digest"), {}, "invalid_option", "has 6 fields; must be five"),
        (("0 3 * * *", "reports digest"), {}, "invalid_name", "must match"),
        (("0 3 * * *", "reports.digest"), {"timezone": "Europe/Bärlin"}, "invalid_option", "IANA"),
        (("0 3 * * *", "reports.digest"), {"retries": 3}, "invalid_option", "allowed are"),
        (("0 3 * * *", "reports.digest"), {"idempotency_key": "k"}, "invalid_option", "allowed"),
        (("0 3 * * *", "reports.digest", {"at": {1, 2}}), {}, "invalid_payload", "JSON"),
    ],
)
def test_a_bad_cron_is_refused_when_declared(
    arguments: tuple[Any, ...], options: dict[str, Any], code: str, allowed: str
) -> None:
    registry = JobRegistry()
    with pytest.raises(JobConfigError) as raised:
        registry.cron(*arguments, **options)
    assert raised.value.code == code
    assert allowed in str(raised.value)
    assert registry.crons == ()


def test_declared_crons_are_cron_values_in_declaration_order() -> None:
    registry = JobRegistry()
    nightly = registry.cron(
        "0 3 * * *",
        "reports.nightly",
        {"région": "Île-de-France"},
        timezone="Europe/Paris",
        queue="reports",
        priority=5,
    )
    weekend = registry.cron("0 9 * * 0,6", "reports.nightly")
    assert nightly == Cron(
        "0 3 * * *",
        "reports.nightly",
        {"région": "Île-de-France"},
        "Europe/Paris",
        {"queue": "reports", "priority": 5},
    )
    assert registry.crons == (nightly, weekend)  # one job name, two schedules
    with pytest.raises(JobConfigError, match="already declared on this registry"):
        registry.cron("0 9 * * 0,6", "reports.nightly")


def test_a_worker_runs_its_own_crons_and_the_registrys_each_once() -> None:
    registry = JobRegistry()
    digest = registry.cron("*/5 * * * *", "reports.digest")
    given = [Cron("*/5 * * * *", "reports.digest"), Cron("0 * * * *", "audit.sweep")]
    assert registry.crons_with(given) == (given[0], given[1])
    assert registry.crons_with([]) == (digest,)
    with pytest.raises(JobConfigError, match="takes Cron values"):
        registry.crons_with(["*/5 * * * * reports.digest"])  # type: ignore[list-item]


def digest_registry(ran: list[Any]) -> JobRegistry:
    registry = JobRegistry()
    registry.cron("* * * * *", "reports.digest", {"tenant": "acme", "rows": "über"})

    @registry.handler("reports.digest")
    def digest(payload: dict[str, str]) -> str:
        ran.append(payload)
        return "sent"

    return registry


async def serve_past_the_tick(clock: FakeClock, workers: list[JobWorker], queue: JobQueue) -> None:
    """Start the workers 0.3 s of real time before the tick, move the clock past it, and
    stop them once the tick's job has run."""
    for worker in workers:
        worker.start()
    await asyncio.sleep(0)  # each cron task reads the clock: its first tick is the next minute
    clock.advance(1.0)
    for _ in range(100):
        await asyncio.sleep(0.05)
        page = await queue.list(name="reports.digest")
        if page.jobs and page.jobs[0].status is JobStatus.COMPLETED:
            break
    for worker in workers:
        await worker.stop()


async def test_a_worker_enqueues_and_runs_its_registrys_cron_at_the_tick() -> None:
    clock = FakeClock(beyond_microseconds(MINUTE_AFTER_START - 0.3))
    queue = JobQueue(MemoryJobStore(clock=clock), clock=clock)
    ran: list[Any] = []
    await serve_past_the_tick(clock, [JobWorker(queue, digest_registry(ran))], queue)
    [job] = (await queue.list(name="reports.digest")).jobs
    assert (job.idempotency_key, job.status, job.result) == (TICK_KEY, JobStatus.COMPLETED, "sent")
    assert ran == [{"tenant": "acme", "rows": "über"}]


async def test_workers_sharing_a_registry_enqueue_one_job_per_tick() -> None:
    clock = FakeClock(beyond_microseconds(MINUTE_AFTER_START - 0.3))
    queue = JobQueue(MemoryJobStore(clock=clock), clock=clock)
    ran: list[Any] = []
    registry = digest_registry(ran)
    also_given = [Cron("* * * * *", "reports.digest", {"tenant": "acme", "rows": "über"})]
    workers = [JobWorker(queue, registry), JobWorker(queue, registry, cron=also_given)]
    await serve_past_the_tick(clock, workers, queue)
    assert [job.idempotency_key for job in (await queue.list()).jobs] == [TICK_KEY]
    assert ran == [{"tenant": "acme", "rows": "über"}]
