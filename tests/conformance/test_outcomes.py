"""complete, fail, release and cancel: where a job goes next (SPEC §2.4 status changes, §2.6)."""

from __future__ import annotations

from sqsjobs import Job, JobStatus

from .harness import BOTH_FACES, Harness
from .support import claim, claim_one, get, put, settle, utc

LEASE_FIELDS = ("lease_token", "locked_by", "lease_until")


def lease_cleared(job: Job) -> bool:
    return all(getattr(job, name) is None for name in LEASE_FIELDS)


async def test_complete_records_the_result_and_completed_at(harness: Harness) -> None:
    for result in [None, {"rows": [1, {"a": None}]}, "text", 3, 2.5, [True]]:
        await put(harness)
        job = await claim_one(harness)
        now = harness.now()
        assert await harness.store.complete(job.id, job.lease_token or "", now, result)
        done = await get(harness, job.id)
        assert (done.status, done.result, done.completed_at, done.updated_at) == (
            JobStatus.COMPLETED,
            result,
            utc(now),
            utc(now),
        )
        assert (done.attempts, done.last_error) == (1, None)
        assert lease_cleared(done)


async def test_fail_with_a_later_retry_delays_the_job(harness: Harness) -> None:
    await put(harness, max_attempts=3)
    job = await claim_one(harness)
    now = harness.now()
    assert await harness.store.fail(job.id, job.lease_token or "", "ValueError: x", now + 1, now)
    failed = await get(harness, job.id)
    assert (failed.status, failed.run_at, failed.last_error, failed.attempts) == (
        JobStatus.DELAYED,
        utc(now + 1),
        "ValueError: x",
        1,
    )
    assert (failed.updated_at, failed.completed_at, failed.result) == (utc(now), None, None)
    assert lease_cleared(failed)
    assert await claim(harness) == []
    await harness.advance(1.5)
    retried = await claim_one(harness)
    assert (retried.id, retried.attempts, retried.last_error) == (job.id, 2, "ValueError: x")


async def test_fail_with_a_retry_not_after_now_queues_the_job(harness: Harness) -> None:
    for retry_in in [0.0, -5.0]:
        await put(harness, max_attempts=3)
        job = await claim_one(harness)
        now = harness.now()
        assert await harness.store.fail(job.id, job.lease_token or "", "E: x", now + retry_in, now)
        failed = await get(harness, job.id)
        assert (failed.status, failed.last_error, failed.attempts) == (JobStatus.QUEUED, "E: x", 1)
        assert lease_cleared(failed)
        retried = await claim_one(harness)
        assert (retried.id, retried.attempts) == (job.id, 2)
        assert await harness.store.cancel(job.id, harness.now())


async def test_fail_without_a_retry_dead_letters_the_job(harness: Harness) -> None:
    await put(harness, max_attempts=3)
    job = await claim_one(harness)
    now = harness.now()
    assert await harness.store.fail(job.id, job.lease_token or "", "JobFatalError: no", None, now)
    dead = await get(harness, job.id)
    assert (dead.status, dead.last_error, dead.attempts, dead.updated_at) == (
        JobStatus.DEAD,
        "JobFatalError: no",
        1,
        utc(now),
    )
    assert (dead.completed_at, dead.result) == (None, None)
    assert lease_cleared(dead)
    assert await claim(harness) == []


async def test_fail_on_the_final_attempt_dead_letters_whatever_the_retry(
    harness: Harness,
) -> None:
    for retry_in in [30.0, 0.0, None]:
        await put(harness, max_attempts=1)
        job = await claim_one(harness)
        now = harness.now()
        retry_at = None if retry_in is None else now + retry_in
        assert await harness.store.fail(job.id, job.lease_token or "", "E: x", retry_at, now)
        assert (await get(harness, job.id)).status is JobStatus.DEAD, retry_in
        assert await claim(harness) == []


async def test_release_requeues_without_counting_the_attempt(harness: Harness) -> None:
    await put(harness, max_attempts=1)
    job = await claim_one(harness)
    now = harness.now()
    assert await harness.store.release(job.id, job.lease_token or "", "worker is stopping", now)
    released = await get(harness, job.id)
    assert (released.status, released.attempts, released.last_error) == (
        JobStatus.QUEUED,
        0,
        "worker is stopping",
    )
    assert (released.run_at, released.updated_at, released.completed_at) == (
        utc(now),
        utc(now),
        None,
    )
    assert lease_cleared(released)
    # The attempt was not counted, so the final attempt can still run.
    again = await claim_one(harness)
    assert (again.id, again.attempts) == (job.id, 1)


# -- cancel -----------------------------------------------------------------------------


@BOTH_FACES
async def test_cancel_of_a_waiting_job(harness: Harness) -> None:
    for delay in [None, 30.0]:
        job = await put(harness, delay=delay)
        now = harness.now()
        assert await harness.store.cancel(job.id, now)
        cancelled = await get(harness, job.id)
        assert (cancelled.status, cancelled.updated_at, cancelled.completed_at) == (
            JobStatus.CANCELLED,
            utc(now),
            None,
        )
    assert await claim(harness) == []


@BOTH_FACES
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


@BOTH_FACES
async def test_cancel_of_a_terminal_or_unknown_job_is_refused(harness: Harness) -> None:
    for status in [JobStatus.COMPLETED, JobStatus.DEAD, JobStatus.CANCELLED]:
        terminal = await settle(harness, await put(harness), status)
        assert not await harness.store.cancel(terminal.id, harness.now()), status
        assert await get(harness, terminal.id) == terminal
    assert not await harness.store.cancel("0" * 32, harness.now())
