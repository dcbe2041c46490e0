"""The dashboard's refreshes cost one store read per interval, whatever the viewers."""

from __future__ import annotations

import asyncio
import time

import pytest

from sqsjobs import MemoryJobStore
from sqsjobs.contrib.dashboard import make_dashboard
from sqsjobs.contrib.dashboard._shared import Shared
from sqsjobs.contrib.dashboard._source import JobSource
from sqsjobs.core.requests import JobFilter, JobPage

from .conftest import local
from .seed import seed


class CountedReads(MemoryJobStore):
    """Counts ``list`` calls; ``failing`` makes the next ones raise, as a throttled table."""

    def __init__(self) -> None:
        super().__init__()
        self.lists = 0
        self.failing = 0

    async def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        self.lists += 1
        if self.failing:
            self.failing -= 1
            raise ConnectionResetError("the table did not answer")
        await asyncio.sleep(0)  # a read takes a turn of the loop, as every real one does
        return await super().list(filter, limit, cursor, now)


@pytest.fixture
async def store() -> CountedReads:
    made = CountedReads()
    await seed(made)
    return made


async def reads_of_one_overview(store: CountedReads) -> int:
    before = store.lists
    await JobSource(store, time.time).overview()
    return store.lists - before


async def test_twenty_viewers_refreshing_at_once_make_one_read(store: CountedReads) -> None:
    one = await reads_of_one_overview(store)
    source = JobSource(store, time.time, window=5.0)
    before = store.lists
    views = await asyncio.gather(*(source.overview() for _ in range(20)))
    assert store.lists - before == one
    assert all(view == views[0] for view in views)


async def test_a_kept_overview_is_read_again_after_the_window_or_an_action(
    store: CountedReads,
) -> None:
    one = await reads_of_one_overview(store)
    clock = [1_000.25]
    source = JobSource(store, time.time, window=5.0)
    source.shared = Shared(5.0, monotonic=lambda: clock[0])
    before = store.lists
    await source.overview()
    clock[0] += 4.9
    await source.overview()
    assert store.lists - before == one
    clock[0] += 0.2  # the window is over
    await source.overview()
    assert store.lists - before == 2 * one
    job = (await store.list(JobFilter(), 1, None, time.time())).jobs[0]
    before = store.lists
    await source.cancel(job.id)
    await source.overview()  # within the window, but an action changed what it shows
    assert store.lists - before == one


async def test_a_failed_read_is_not_kept(store: CountedReads) -> None:
    source = JobSource(store, time.time, window=5.0)
    store.failing = 1
    with pytest.raises(ConnectionResetError):
        await source.overview()
    view = await source.overview()
    assert view.queues


def test_pages_reloaded_within_the_refresh_read_the_store_once(store: CountedReads) -> None:
    with local(make_dashboard(store, refresh=5.0)) as client:
        assert client.get("/").status_code == 200
        first = store.lists
        for _ in range(5):
            assert client.get("/").status_code == 200
        assert store.lists == first


def test_a_dashboard_that_never_refreshes_reads_on_every_load(store: CountedReads) -> None:
    with local(make_dashboard(store, refresh=0)) as client:
        assert client.get("/").status_code == 200
        first = store.lists
        assert client.get("/").status_code == 200
        assert store.lists == 2 * first


def test_a_store_that_fails_shows_why_and_the_last_figures_with_their_age(
    store: CountedReads,
) -> None:
    """No bare "Internal Server Error": the overview keeps what it read last, says how
    old it is and what failed, and the next refresh tries again."""
    with local(make_dashboard(store, refresh=0)) as client:
        first = client.get("/")
        assert first.status_code == 200 and 'id="failure"' not in first.text
        store.failing = 10
        stale = client.get("/")
        assert stale.status_code == 200
        assert "Could not read the store: ConnectionResetError: the table did not answer" in (
            stale.text
        )
        assert 'data-queue="default"' in stale.text  # the figures read before
        listing = client.get("/jobs")
        assert listing.status_code == 503
        assert "ConnectionResetError: the table did not answer" in listing.text
        assert "Internal Server Error" not in listing.text
        refresh = client.get("/jobs", headers={"HX-Request": "true"})
        assert refresh.status_code == 200 and 'id="error"' in refresh.text
        store.failing = 0
        again = client.get("/")
        assert again.status_code == 200 and 'id="failure"' not in again.text


def test_an_endpoint_that_does_not_answer_is_explained_on_the_first_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sqsjobs.aws import SqsJobStore

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")

    dead = SqsJobStore(
        table_name="jobs",
        queue_urls={"default": "http://127.0.0.1:9/123456789012/default"},
        endpoint_url="http://127.0.0.1:9",
        region_name="eu-west-1",
        connect_timeout=1,
        max_attempts=1,
    )
    try:
        with local(make_dashboard(dead, refresh=5.0)) as client:
            page = client.get("/")
    finally:
        dead.close()
    assert page.status_code == 503
    assert "Could not connect to http://127.0.0.1:9" in page.text
    assert "check --endpoint-url (or AWS_ENDPOINT_URL)" in page.text
    assert "Trying again every 5 s." in page.text
