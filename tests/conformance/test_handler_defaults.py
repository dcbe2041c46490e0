"""Handler defaults: what a producer given the registry writes, and the timeout a run enforces.

The record is the contract here: the options a handler declares land in the stored job,
and a run enforces the record's timeout, whatever its handler declares. Whether the
producer chose the timeout itself (``timeout_explicit``) survives the store, through
``get`` and through ``claim``: the worker reads it from the claimed job, to tell a
default from a choice when it warns of a handler's options left out.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from sqsjobs import JobContext, JobQueue, JobRegistry, JobStatus, JobWorker

from .harness import BOTH_FACES, Harness
from .support import claim_one, get

REPORT = "report.build"
PAYLOAD = {"mes": "mayo", "año": 2026, "título": "Ventas — Q2"}


def report_registry(*, timeout: float | timedelta = timedelta(minutes=10)) -> JobRegistry:
    registry = JobRegistry()

    @registry.handler(REPORT, queue="other", max_attempts=2, timeout=timeout, lease=45)
    async def build(payload: dict[str, object], ctx: JobContext) -> str:
        await asyncio.sleep(3.0)  # far longer than the handler's short timeouts below
        return "built"

    return registry


def producer(harness: Harness, registry: JobRegistry | None = None, **options: Any) -> JobQueue:
    return JobQueue(harness.store, clock=harness.clock, registry=registry, **options)


@BOTH_FACES
async def test_the_handlers_defaults_land_in_the_record(harness: Harness) -> None:
    queue = producer(harness, report_registry())
    job = (await queue.enqueue(REPORT, PAYLOAD, tenant="acme")).job
    stored = await get(harness, job.id)
    assert (stored.queue, stored.max_attempts, stored.timeout, stored.lease) == (
        "other",
        2,
        600.0,
        45.0,
    )
    assert (stored.payload, stored.tenant, stored.timeout_explicit) == (PAYLOAD, "acme", False)


@BOTH_FACES
async def test_an_explicit_enqueue_argument_wins_over_the_handler(harness: Harness) -> None:
    queue = producer(harness, report_registry())
    job = (
        await queue.enqueue(
            REPORT, PAYLOAD, queue="default", max_attempts=7, timeout=5, lease=timedelta(seconds=12)
        )
    ).job
    stored = await get(harness, job.id)
    assert (stored.queue, stored.max_attempts, stored.timeout, stored.lease) == (
        "default",
        7,
        5.0,
        12.0,
    )
    assert stored.timeout_explicit is True


async def test_a_claimed_job_says_whether_its_timeout_was_chosen(harness: Harness) -> None:
    plain = producer(harness)  # no registry: the producer's own defaults
    chosen = (await plain.enqueue(REPORT, PAYLOAD, timeout=0)).job
    defaulted = (await plain.enqueue(REPORT, PAYLOAD)).job
    first, second = await claim_one(harness), await claim_one(harness)
    claimed = {first.id: first, second.id: second}
    assert claimed[chosen.id].timeout_explicit is True
    assert (claimed[defaulted.id].timeout, claimed[defaulted.id].timeout_explicit) == (30.0, False)


async def run_one(harness: Harness, registry: JobRegistry) -> None:
    worker = JobWorker(producer(harness), registry, queues=["default"], clock=harness.clock)
    assert await worker.run_once()
    await worker.stop()


async def test_a_run_enforces_the_records_defaulted_timeout_over_the_handlers(
    harness: Harness,
) -> None:
    # A producer that never saw the registry, its own default 0.3 s: the record says 0.3 s,
    # not chosen per job; the handler declares 10 minutes. What ``jobs show`` says applies.
    plain = producer(harness, default_timeout=0.3)
    job = (await plain.enqueue(REPORT, PAYLOAD, max_attempts=1)).job
    assert (job.timeout, job.timeout_explicit) == (0.3, False)
    await run_one(harness, report_registry())
    dead = await get(harness, job.id)
    assert (dead.status, dead.timeout) == (JobStatus.DEAD, 0.3)
    assert dead.last_error == (
        "JobTimeoutError: Job exceeded its timeout of 0.3s and was cancelled."
    )


async def test_a_timeout_the_producer_chose_applies_over_the_handlers(harness: Harness) -> None:
    job = (await producer(harness).enqueue(REPORT, PAYLOAD, max_attempts=1, timeout=0)).job
    await run_one(harness, report_registry(timeout=0.3))
    done = await get(harness, job.id)
    assert (done.status, done.result) == (JobStatus.COMPLETED, "built")
