"""list: oldest first, filters, keyset pagination and its bounds (SPEC §2.6)."""

from __future__ import annotations

from typing import Any

import pytest

from sqsjobs import Job, JobConfigError, JobFilter

from .harness import BOTH_FACES, Harness
from .support import build, claim_one, list_ids, statuses

pytestmark = BOTH_FACES


async def _put_at(harness: Harness, at: float, **options: Any) -> Job:
    prepared = build(harness, at=at, **options)
    return (await harness.store.put(prepared.job, prepared.fingerprint)).job


async def test_list_is_oldest_first_then_by_id(harness: Harness) -> None:
    now = harness.now()
    newest = await _put_at(harness, now - 1)
    oldest = await _put_at(harness, now - 3)
    tied = [await _put_at(harness, now - 2) for _ in range(3)]
    expected = [oldest.id, *sorted(job.id for job in tied), newest.id]
    assert await list_ids(harness) == expected
    page = await harness.store.list(JobFilter(), 100, None, harness.now())
    assert list(page.jobs) == [await harness.store.get(i, harness.now()) for i in expected]


async def test_list_pages_with_opaque_cursors(harness: Harness) -> None:
    now = harness.now()
    jobs = [await _put_at(harness, now - 5 + i) for i in range(5)]
    cursor = None
    pages: list[list[str]] = []
    for _ in range(10):
        page = await harness.store.list(JobFilter(), 2, cursor, harness.now())
        pages.append([job.id for job in page.jobs])
        if page.next_cursor is None:
            break
        assert isinstance(page.next_cursor, str)
        cursor = page.next_cursor
    assert [job_id for page_ids in pages for job_id in page_ids] == [job.id for job in jobs]
    assert all(0 < len(page_ids) <= 2 for page_ids in pages[:-1])
    assert len(pages[-1]) <= 2


async def test_a_cursor_is_a_position_that_can_be_read_again(harness: Harness) -> None:
    now = harness.now()
    jobs = [await _put_at(harness, now - 3 + i) for i in range(3)]
    first = await harness.store.list(JobFilter(), 1, None, harness.now())
    assert first.next_cursor is not None
    again = [
        await harness.store.list(JobFilter(), 2, first.next_cursor, harness.now()) for _ in range(2)
    ]
    assert [job.id for job in again[0].jobs] == [job.id for job in again[1].jobs]
    assert [job.id for job in again[0].jobs] == [job.id for job in jobs[1:]]


async def _mixed(harness: Harness) -> dict[str, str]:
    """Jobs of every kind the filters tell apart, created a millisecond apart."""
    now = harness.now() - 1
    made = {
        "a_default": await _put_at(harness, now, name="a.job", tenant="acme"),
        "b_default": await _put_at(harness, now + 0.001, name="b.job", tenant="other"),
        "a_other": await _put_at(harness, now + 0.002, name="a.job", queue="other"),
        "delayed": await _put_at(harness, now + 0.003, name="b.job", delay=60, tenant="acme"),
    }
    claimed = await claim_one(harness, "other")
    assert claimed.id == made["a_other"].id
    return {label: job.id for label, job in made.items()}


FILTERS = [
    (JobFilter(), ["a_default", "b_default", "a_other", "delayed"]),
    (JobFilter(queue="default"), ["a_default", "b_default", "delayed"]),
    (JobFilter(queue="other"), ["a_other"]),
    (JobFilter(statuses=statuses("queued")), ["a_default", "b_default"]),
    (JobFilter(statuses=statuses("running", "delayed")), ["a_other", "delayed"]),
    (JobFilter(statuses=statuses("dead")), []),
    (JobFilter(name="a.job"), ["a_default", "a_other"]),
    (JobFilter(tenant="acme"), ["a_default", "delayed"]),
    (JobFilter(queue="default", name="b.job", tenant="acme"), ["delayed"]),
    (JobFilter(queue="default", statuses=statuses("queued"), tenant="other"), ["b_default"]),
]


async def test_list_filters(harness: Harness) -> None:
    ids = await _mixed(harness)
    for filter, labels in FILTERS:
        page = await harness.store.list(filter, 100, None, harness.now())
        assert [job.id for job in page.jobs] == [ids[label] for label in labels], filter
        assert page.next_cursor is None


async def test_list_filters_across_pages(harness: Harness) -> None:
    ids = await _mixed(harness)
    expected = [ids["a_default"], ids["delayed"]]
    assert await list_ids(harness, limit=1, tenant="acme") == expected


async def test_list_bounds_its_limit_and_checks_its_cursor(harness: Harness) -> None:
    empty = await harness.store.list(JobFilter(), 10, None, harness.now())
    assert (list(empty.jobs), empty.next_cursor) == ([], None)
    job = await _put_at(harness, harness.now())
    for limit in [1, 1000]:
        page = await harness.store.list(JobFilter(), limit, None, harness.now())
        assert [j.id for j in page.jobs] == [job.id]
    for limit in [0, -1, 1001]:
        with pytest.raises(JobConfigError) as caught:
            await harness.store.list(JobFilter(), limit, None, harness.now())
        assert caught.value.code == "invalid_option", limit
    for cursor in ["", "not a cursor", "eyJ4IjoxfQ"]:
        with pytest.raises(JobConfigError) as caught:
            await harness.store.list(JobFilter(), 10, cursor, harness.now())
        assert caught.value.code == "invalid_option", cursor
