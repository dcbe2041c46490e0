"""The job and dead-letter lists: what ended comes newest first, and a link flips the order."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from sqsjobs import JobQueue, MemoryJobStore
from sqsjobs.contrib.dashboard import make_dashboard
from tests.support.clock import FakeClock

from .conftest import local
from .seed import Seeded


def rows(html: str) -> list[str]:
    return re.findall(r'<tr data-job-id="([0-9a-f]+)">', html)


def link(html: str, anchor: str) -> str | None:
    found = re.search(rf'<a href="([^"]+)" id="{anchor}">', html)
    return None if found is None else found.group(1).replace("&amp;", "&")


def test_ended_statuses_are_newest_first_and_open_ones_oldest_first(
    client: TestClient, seeded: Seeded
) -> None:
    dead = client.get("/jobs", params={"status": "dead"}).text
    assert rows(dead) == [seeded.hostile, seeded.dead]  # the charge died first
    assert "Newest first" in dead
    oldest = client.get("/jobs", params={"status": "dead", "order": "oldest"}).text
    assert rows(oldest) == [seeded.dead, seeded.hostile]
    queued = client.get("/jobs", params={"status": "queued"}).text
    assert rows(queued) == seeded.waiting and "Oldest first" in queued
    newest = client.get("/jobs", params={"status": "queued", "order": "newest"}).text
    assert rows(newest) == seeded.waiting[::-1]
    everything = rows(client.get("/jobs").text)
    assert rows(client.get("/jobs", params={"order": "newest"}).text) == everything[::-1]
    assert rows(client.get("/dead").text) == [seeded.hostile, seeded.dead]
    assert rows(client.get("/dead", params={"order": "oldest"}).text) == [
        seeded.dead,
        seeded.hostile,
    ]


def test_the_order_link_flips_the_list_and_keeps_its_filters(
    client: TestClient, seeded: Seeded
) -> None:
    page = client.get("/jobs", params={"status": "dead", "queue": "other"}).text
    flip = link(page, "flip-order")
    assert flip is not None
    assert flip.startswith("/jobs?") and "cursor=" not in flip
    assert {"status=dead", "queue=other", "order=oldest"} <= set(flip.split("?")[1].split("&"))
    flipped = client.get(flip).text
    assert rows(flipped) == [seeded.dead]
    assert "order=newest" in (link(flipped, "flip-order") or "")
    assert '<input type="hidden" name="order" value="oldest">' in flipped  # filters keep it


async def test_newest_first_pages_neither_repeat_nor_skip() -> None:
    clock = FakeClock()
    store = MemoryJobStore(clock=clock)
    queue = JobQueue(store, clock=clock)
    ids = []
    for n in range(7):
        ids.append((await queue.enqueue("thumbnail.render", {"photo": f"IMG_{n:04d}.jpg"})).job.id)
        assert await queue.cancel(ids[-1])
        clock.advance(0.0371 if n % 2 else 0.000001)
    with local(make_dashboard(store, page_size=3, clock=clock)) as client:
        seen: list[str] = []
        page = client.get("/jobs", params={"status": "cancelled"})
        while True:
            seen += rows(page.text)
            following = link(page.text, "next-page")
            if following is None:
                break
            assert "status=cancelled" in following
            page = client.get(following)
        assert seen == ids[::-1]
        first = client.get("/jobs", params={"status": "cancelled"}).text
        cursor = re.search(r"cursor=([^&\"]+)", link(first, "next-page") or "")
        assert cursor is not None
        other_way = {"status": "cancelled", "order": "oldest", "cursor": cursor.group(1)}
        refused = client.get("/jobs", params=other_way)
    assert refused.status_code == 400
    assert "it continues a newest-first list" in refused.text


def test_an_unknown_order_is_a_400(client: TestClient) -> None:
    page = client.get("/jobs", params={"order": "sideways"})
    assert page.status_code == 400
    assert "unknown order &#39;sideways&#39;; newest or oldest" in page.text
