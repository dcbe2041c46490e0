"""list newest first (``JobFilter.newest_first``): the same walk from the other end.

Creation times are realistic clock readings, not round numbers: fractions of a second
with digits below the microsecond that a datetime cannot keep, jobs created in the same
microsecond (ties broken by id), and instants a microsecond apart, so a cursor that lost
or rounded its position would repeat or skip a job on the next page.
"""

from __future__ import annotations

from typing import Any

import pytest

from sqsjobs import Job, JobConfigError, JobFilter, JobStatus

from ..support.clock import beyond_microseconds
from .harness import BOTH_FACES, Harness
from .support import build, list_ids, settle, statuses

pytestmark = BOTH_FACES

ENDED = statuses("completed", "dead", "cancelled")


async def _put_at(harness: Harness, at: float, **options: Any) -> Job:
    prepared = build(harness, at=at, **options)
    return (await harness.store.put(prepared.job, prepared.fingerprint)).job


def _instants(harness: Harness) -> list[float]:
    """Creation times of the last minute as a clock reads them: uneven gaps, two instants
    a microsecond apart, and three that a datetime rounds to one microsecond."""
    start = beyond_microseconds(harness.now() - 61.3)
    gaps = [0.0, 7.2439704, 0.000001, 13.0817365, 0.0, 0.0, 21.5503118, 0.0003917]
    instants, at = [], start
    for gap in gaps:
        at += gap
        instants.append(at)
    return instants


async def _history(harness: Harness) -> list[Job]:
    """Jobs created at ``_instants``, put in an order unlike their creation order."""
    instants = _instants(harness)
    order = [3, 0, 6, 1, 7, 4, 2, 5]
    made = {index: await _put_at(harness, instants[index]) for index in order}
    return [made[index] for index in range(len(instants))]


def _oldest_first(jobs: list[Job]) -> list[str]:
    return [job.id for job in sorted(jobs, key=lambda job: (job.created_at, job.id))]


async def test_newest_first_is_oldest_first_reversed_ties_included(harness: Harness) -> None:
    jobs = await _history(harness)
    oldest = _oldest_first(jobs)
    assert await list_ids(harness) == oldest
    assert await list_ids(harness, newest_first=True) == oldest[::-1]
    page = await harness.store.list(JobFilter(newest_first=True), 100, None, harness.now())
    assert [job.id for job in page.jobs] == oldest[::-1]
    assert page.next_cursor is None


@pytest.mark.parametrize("limit", [1, 3])
async def test_newest_first_pages_neither_repeat_nor_skip(harness: Harness, limit: int) -> None:
    jobs = await _history(harness)
    newest = _oldest_first(jobs)[::-1]
    pages: list[list[str]] = []
    cursor = None
    while True:
        page = await harness.store.list(JobFilter(newest_first=True), limit, cursor, harness.now())
        pages.append([job.id for job in page.jobs])
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert [job_id for ids in pages for job_id in ids] == newest
    assert all(len(ids) == limit for ids in pages[:-1])
    # A cursor is a position: read again, it gives the same page.
    first = await harness.store.list(JobFilter(newest_first=True), limit, None, harness.now())
    again = [
        await harness.store.list(JobFilter(newest_first=True), limit, first.next_cursor, now)
        for now in (harness.now(), harness.now())
    ]
    assert [job.id for job in again[0].jobs] == [job.id for job in again[1].jobs] == pages[1]


async def test_ended_jobs_newest_first_across_statuses_and_queues(harness: Harness) -> None:
    """What an operator looking for recent failures asks: every ended job, last first."""
    instants = _instants(harness)
    plan = [
        ("default", JobStatus.DEAD),
        ("other", JobStatus.COMPLETED),
        ("default", JobStatus.CANCELLED),
        ("default", JobStatus.QUEUED),
        ("other", JobStatus.DEAD),
        ("default", JobStatus.COMPLETED),
        ("other", JobStatus.CANCELLED),
        ("default", JobStatus.DEAD),
    ]
    # Each job is settled before the next is put, as a claim takes any of its queue's:
    # the ones a worker ends first, then the cancelled (whose messages SQS still holds,
    # and a claim may meet instead of a job), and the one left queued last.
    later = {JobStatus.CANCELLED: 1, JobStatus.QUEUED: 2}
    made: dict[int, Job] = {}
    for index in sorted(range(len(plan)), key=lambda i: later.get(plan[i][1], 0)):
        queue, status = plan[index]
        made[index] = await settle(
            harness, await _put_at(harness, instants[index], queue=queue), status
        )
    jobs = [made[index] for index in range(len(plan))]
    ended = [job for job in jobs if job.status in ENDED]
    newest = _oldest_first(ended)[::-1]
    await lists(harness, newest, statuses=ENDED, newest_first=True)
    await lists(harness, newest, limit=2, statuses=ENDED, newest_first=True)
    dead = [job.id for job in ended if job.status is JobStatus.DEAD][::-1]
    await lists(harness, dead, limit=1, statuses=statuses("dead"), newest_first=True)
    in_default = [job.id for job in ended if job.queue == "default"][::-1]
    await lists(harness, in_default, limit=1, queue="default", statuses=ENDED, newest_first=True)


async def lists(harness: Harness, expected: list[str], **query: Any) -> None:
    """``list`` returns ``expected`` in its order, but for the jobs that reached the end
    of their retention meanwhile: seconds in this harness (``RETENTION``), of real time on
    SQS, which a loaded machine may spend between the first job's end and a listing.
    What is still kept once the listing is done was kept during it, so it is listed."""
    got = await list_ids(harness, **query)
    kept = [i for i in expected if await harness.store.get(i, harness.now()) is not None]
    assert [i for i in expected if i in got] == got  # nothing else, in order
    assert set(kept) <= set(got)


async def test_a_rare_match_newest_first_pages_on_until_the_end(harness: Harness) -> None:
    """A filter that matches few entries may return short pages (a store may stop
    reading, with a cursor, before it found ``limit``), never a skip or a wrong order."""
    start = harness.now() - 30.8127453
    prepared = [
        build(harness, at=start + 0.0311 * i, name="rare.job" if i % 6 == 2 else "common.job")
        for i in range(30)
    ]
    await harness.store.put_many([(p.job, p.fingerprint) for p in prepared])
    rare = [p.job.id for p in prepared[::-1] if p.job.name == "rare.job"]
    found = await list_ids(harness, limit=1, queue="default", name="rare.job", newest_first=True)
    assert found == rare
    newest = [p.job.id for p in prepared[::-1]]
    assert await list_ids(harness, limit=7, queue="default", newest_first=True) == newest


async def test_a_cursor_continues_only_a_list_in_its_own_direction(harness: Harness) -> None:
    await _history(harness)
    cursors = {}
    for newest_first in (False, True):
        page = await harness.store.list(
            JobFilter(newest_first=newest_first), 2, None, harness.now()
        )
        assert page.next_cursor is not None
        cursors[newest_first] = page.next_cursor
    for newest_first, cursor in cursors.items():
        with pytest.raises(JobConfigError) as caught:
            await harness.store.list(
                JobFilter(newest_first=not newest_first), 2, cursor, harness.now()
            )
        made, other = ("a newest", "an oldest") if newest_first else ("an oldest", "a newest")
        assert caught.value.code == "invalid_option"
        assert f"it continues {made}-first list, not {other}-first one" in str(caught.value)
