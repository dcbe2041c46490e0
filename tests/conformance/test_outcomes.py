"""complete, fail, release and cancel: where a job goes next (SPEC §2.4 status changes, §2.6)."""

from __future__ import annotations

from typing import Any

import pytest

from sqsjobs import Job, JobStatus

from .harness import Harness
from .support import claim, claim_one, get, put, utc

LEASE_FIELDS = ("lease_token", "locked_by", "lease_until")


def lease_cleared(job: Job) -> bool:
    return all(getattr(job, name) is None for name in LEASE_FIELDS)


@pytest.mark.parametrize("result", [None, {"rows": [1, {"a": None}]}, "text", 3, 2.5, [True]])
async def test_complete_records_the_result_and_completed_at(harness: Harness, result: Any) -> None:
    await put(harness)
    job = await claim_one(harness)
    now = harness.now()
    assert await harness.store.complete(job.id, job.lease_token or "", now, result)
    done = await get(harness, job.id)
    assert (done.status, done.result, done.completed_at, done.updated_at) == (
        JobStatus.COMPLETED, result, utc(now), utc(now),
    )  # fmt: skip
    assert (done.attempts, done.last_error) == (1, None)
    assert lease_cleared(done)


async def test_fail_with_a_later_retry_delays_the_job(harness: Harness) -> None:
    await put(harness, max_attempts=3)
    job = await claim_one(harness)
    now = harness.now()
    assert await harness.store.fail(job.id, job.lease_token or "", "ValueError: x", now + 1, now)
    failed = await get(harness, job.id)
    assert (failed.status, failed.run_at, failed.last_error, failed.attempts) == (
        JobStatus.DELAYED, utc(now + 1), "ValueError: x", 1,
    )  # fmt: skip
    assert (failed.updated_at, failed.completed_at, failed.result) == (utc(now), None, None)
    assert lease_cleared(failed)
    assert await claim(harness) == []
    await harness.advance(1.5)
    retried = await claim_one(harness)
    assert (retried.id, retried.attempts, retried.last_error) == (job.id, 2, "ValueError: x")


@pytest.mark.parametrize("retry_in", [0.0, -5.0])
async def test_fail_with_a_retry_not_after_now_queues_the_job(
    harness: Harness, retry_in: float
) -> None:
    await put(harness, max_attempts=3)
    job = await claim_one(harness)
    now = harness.now()
    assert await harness.store.fail(job.id, job.lease_token or "", "E: x", now + retry_in, now)
    failed = await get(harness, job.id)
    assert (failed.status, failed.last_error, failed.attempts) == (JobStatus.QUEUED, "E: x", 1)
    assert lease_cleared(failed)
    retried = await claim_one(harness)
    assert (retried.id, retried.attempts) == (job.id, 2)


async def test_fail_without_a_retry_dead_letters_the_job(harness: Harness) -> None:
    await put(harness, max_attempts=3)
    job = await claim_one(harness)
    now = harness.now()
    assert await harness.store.fail(job.id, job.lease_token or "", "JobFatalError: no", None, now)
    dead = await get(harness, job.id)
    assert (dead.status, dead.last_error, dead.attempts, dead.updated_at) == (
        JobStatus.DEAD, "JobFatalError: no", 1, utc(now),
    )  # fmt: skip
    assert (dead.completed_at, dead.result) == (None, None)
    assert lease_cleared(dead)
    assert await claim(harness) == []


@pytest.mark.parametrize("retry_in", [30.0, 0.0, None])
async def test_fail_on_the_final_attempt_dead_letters_whatever_the_retry(
    harness: Harness, retry_in: float | None
) -> None:
    await put(harness, max_attempts=1)
    job = await claim_one(harness)
    now = harness.now()
    retry_at = None if retry_in is None else now + retry_in
    assert await harness.store.fail(job.id, job.lease_token or "", "E: x", retry_at, now)
    assert (await get(harness, job.id)).status is JobStatus.DEAD
    assert await claim(harness) == []


async def test_release_requeues_without_counting_the_attempt(harness: Harness) -> None:
    await put(harness, max_attempts=1)
    job = await claim_one(harness)
    now = harness.now()
    assert await harness.store.release(job.id, job.lease_token or "", "worker is stopping", now)
    released = await get(harness, job.id)
    assert (released.status, released.attempts, released.last_error) == (
        JobStatus.QUEUED, 0, "worker is stopping",
    )  # fmt: skip
    assert (released.run_at, released.updated_at, released.completed_at) == (
        utc(now), utc(now), None,
    )  # fmt: skip
    assert lease_cleared(released)
    # The attempt was not counted, so the final attempt can still run.
    again = await claim_one(harness)
    assert (again.id, again.attempts) == (job.id, 1)


# -- cancel -----------------------------------------------------------------------------


@pytest.mark.parametrize("delay", [None, 30.0])
async def test_cancel_of_a_waiting_job(harness: Harness, delay: float | None) -> None:
    job = await put(harness, delay=delay)
    now = harness.now()
    assert await harness.store.cancel(job.id, now)
    cancelled = await get(harness, job.id)
    assert (cancelled.status, cancelled.updated_at, cancelled.completed_at) == (
        JobStatus.CANCELLED, utc(now), None,
    )  # fmt: skip
    assert await claim(harness) == []


async def test_cancel_of_a_running_job_fences_out_its_holder(harness: Harness) -> None:
    await put(harness)
    job = await claim_one(harness)
    token = job.lease_token or ""
    assert await harness.store.cancel(job.id, harness.now())
    cancelled = await get(harness, job.id)
    assert cancelled.status is JobStatus.CANCELLED
    assert lease_cleared(cancelled)
    now = harness.now()
    assert not await harness.store.heartbeat(job.id, token, now + 30, now)
    assert not await harness.store.complete(job.id, token, now, "late")
    assert await get(harness, job.id) == cancelled


@pytest.mark.parametrize("status", [JobStatus.COMPLETED, JobStatus.DEAD, JobStatus.CANCELLED])
async def test_cancel_of_a_terminal_job_is_refused(harness: Harness, status: JobStatus) -> None:
    await put(harness)
    job = await claim_one(harness)
    now = harness.now()
    token = job.lease_token or ""
    if status is JobStatus.COMPLETED:
        assert await harness.store.complete(job.id, token, now, None)
    elif status is JobStatus.DEAD:
        assert await harness.store.fail(job.id, token, "E: x", None, now)
    else:
        assert await harness.store.cancel(job.id, now)
    terminal = await get(harness, job.id)
    assert terminal.status is status
    assert not await harness.store.cancel(job.id, harness.now())
    assert await get(harness, job.id) == terminal


async def test_cancel_of_an_unknown_job_is_refused(harness: Harness) -> None:
    assert not await harness.store.cancel("0" * 32, harness.now())
