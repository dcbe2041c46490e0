"""The claim's table, row by row, on every store: may this job run now? (``ClaimRule``)

Each test puts a record in one row of ``sqsjobs.core.lifecycle.ClaimRule`` (checked by
reading it back), claims, and checks what the row decides: run it (leased, attempts + 1,
a new token), skip it (the record untouched), or dead-letter it. A row added to the
table without a test here fails ``test_every_row_of_the_claim_table_has_a_test``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqsjobs import Job, JobStatus
from sqsjobs.core.lifecycle import LEASE_EXPIRED_ERROR, ClaimRule, claim_rule

from .harness import Harness
from .support import claim, claim_one, get, put


def rule_of(harness: Harness, job: Job) -> ClaimRule:
    """The row the stored record of ``job`` is in now."""
    lease_until = None if job.lease_until is None else job.lease_until.timestamp()
    return claim_rule(
        job.status,
        job.run_at.timestamp(),
        lease_until,
        job.attempts,
        job.max_attempts,
        harness.now(),
    )


async def in_row(harness: Harness, job: Job, rule: ClaimRule) -> Job:
    stored = await get(harness, job.id)
    assert rule_of(harness, stored) is rule, (stored.status, rule.case)
    return stored


async def test_a_job_waiting_for_its_parents_is_skipped(harness: Harness) -> None:
    parent = await put(harness, delay=45)
    child = await in_row(
        harness, await put(harness, after=[parent.id]), ClaimRule.WAITING_FOR_PARENTS
    )
    assert await claim(harness) == []
    assert await get(harness, child.id) == child


async def test_a_queued_job_runs(harness: Harness) -> None:
    job = await in_row(harness, await put(harness, payload={"order": "ø-1"}), ClaimRule.QUEUED)
    [claimed] = await claim(harness)
    assert (claimed.id, claimed.status, claimed.attempts) == (job.id, JobStatus.RUNNING, 1)


async def test_a_delayed_job_runs_once_its_run_at_is_reached(harness: Harness) -> None:
    job = await put(harness, payload={"order": "ø-2"}, delay=1)
    await harness.advance(1.4)
    await in_row(harness, job, ClaimRule.DELAYED_DUE)
    [claimed] = await claim(harness)
    assert (claimed.id, claimed.status, claimed.attempts) == (job.id, JobStatus.RUNNING, 1)


async def test_a_delayed_job_is_skipped_before_its_run_at(harness: Harness) -> None:
    job = await in_row(harness, await put(harness, delay=45), ClaimRule.DELAYED_NOT_DUE)
    assert await claim(harness) == []
    assert await get(harness, job.id) == job


async def test_a_running_job_is_skipped_while_its_lease_is_live(harness: Harness) -> None:
    await put(harness, lease=30, max_attempts=3)
    running = await in_row(harness, await claim_one(harness, worker="w1"), ClaimRule.LEASE_LIVE)
    assert await claim(harness, worker="w2") == []
    assert await get(harness, running.id) == running


async def test_a_running_job_whose_lease_is_over_runs_again(harness: Harness) -> None:
    await put(harness, lease=1, max_attempts=2)
    first = await claim_one(harness, worker="w1")
    await harness.advance(1.4)
    await in_row(harness, first, ClaimRule.LEASE_OVER)
    [again] = await claim(harness, worker="w2")
    assert (again.id, again.attempts, again.locked_by) == (first.id, 2, "w2")
    assert again.lease_token not in (None, first.lease_token)


async def test_a_lease_over_on_the_final_attempt_dead_letters_the_job(harness: Harness) -> None:
    await put(harness, lease=1, max_attempts=1)
    only = await claim_one(harness, worker="w1")
    await harness.advance(1.4)
    await in_row(harness, only, ClaimRule.LEASE_OVER_FINAL)
    assert await claim(harness, worker="w2") == []
    dead = await get(harness, only.id)
    assert (dead.status, dead.attempts, dead.last_error) == (
        JobStatus.DEAD,
        1,
        LEASE_EXPIRED_ERROR,
    )


async def test_a_completed_dead_or_cancelled_job_is_skipped(harness: Harness) -> None:
    await put(harness, payload={"ends": "completed"})
    completed = await claim_one(harness)
    assert await harness.store.complete(
        completed.id, completed.lease_token or "", harness.now(), {"ok": True}
    )
    await put(harness, payload={"ends": "dead"}, max_attempts=1)
    failed = await claim_one(harness)
    assert await harness.store.fail(
        failed.id, failed.lease_token or "", "E: x", None, harness.now()
    )
    cancelled = await put(harness, payload={"ends": "cancelled"})
    assert await harness.store.cancel(cancelled.id, harness.now())
    ended = [await in_row(harness, job, ClaimRule.ENDED) for job in (completed, failed, cancelled)]
    assert [job.status for job in ended] == [
        JobStatus.COMPLETED,
        JobStatus.DEAD,
        JobStatus.CANCELLED,
    ]
    assert await claim(harness, limit=3) == []
    assert [await get(harness, job.id) for job in ended] == ended


ROW_TESTS: dict[ClaimRule, Callable[[Harness], Awaitable[None]]] = {
    ClaimRule.WAITING_FOR_PARENTS: test_a_job_waiting_for_its_parents_is_skipped,
    ClaimRule.QUEUED: test_a_queued_job_runs,
    ClaimRule.DELAYED_DUE: test_a_delayed_job_runs_once_its_run_at_is_reached,
    ClaimRule.DELAYED_NOT_DUE: test_a_delayed_job_is_skipped_before_its_run_at,
    ClaimRule.LEASE_LIVE: test_a_running_job_is_skipped_while_its_lease_is_live,
    ClaimRule.LEASE_OVER: test_a_running_job_whose_lease_is_over_runs_again,
    ClaimRule.LEASE_OVER_FINAL: test_a_lease_over_on_the_final_attempt_dead_letters_the_job,
    ClaimRule.ENDED: test_a_completed_dead_or_cancelled_job_is_skipped,
}


def test_every_row_of_the_claim_table_has_a_test() -> None:
    assert set(ROW_TESTS) == set(ClaimRule)
