"""Every page over a memory store: what it shows, its filters and its paging."""

from __future__ import annotations

import html
import re
import time

import pytest
from starlette.testclient import TestClient

from sqsjobs import JobQueue, JobStatus, MemoryJobStore
from sqsjobs.contrib.dashboard import make_dashboard

from .conftest import local
from .seed import DECLINED_TRACE, Seeded


def rows(html: str) -> list[str]:
    """The job ids of a page's table, in order."""
    return re.findall(r'<tr data-job-id="([0-9a-f]+)">', html)


def test_the_overview_counts_each_queue_by_status(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    default = page.text.split('<tr data-queue="default">')[1].split("</tr>")[0]
    other = page.text.split('<tr data-queue="other">')[1].split("</tr>")[0]
    # default: the receipt completed, the hostile import dead, three reports queued,
    # the cleanup cancelled; other: the charge dead.
    for status, count in (("queued", 3), ("completed", 1), ("dead", 1), ("cancelled", 1)):
        assert f'status={status}">{count}</a>' in default
    assert 'status=dead">1</a>' in other
    assert other.count('<span class="zero">0</span>') == 6  # every status but dead
    assert "1 completed, 1 dead" in default
    assert "0 completed, 1 dead" in other
    assert re.search(r'<td class="num oldest">\d+s</td>', default)
    assert '<td class="num muted" title="This store has no SQS queues">n/a</td>' in default


def test_the_overview_says_so_when_nothing_was_enqueued() -> None:
    with local(make_dashboard(MemoryJobStore())) as client:
        assert "No queues yet" in client.get("/").text


def test_the_job_list_filters_by_queue_status_name_and_tenant(
    client: TestClient, seeded: Seeded
) -> None:
    everything = rows(client.get("/jobs").text)
    assert len(everything) == 7
    assert rows(client.get("/jobs", params={"queue": "other"}).text) == [seeded.dead]
    assert rows(client.get("/jobs", params={"status": "queued"}).text) == seeded.waiting
    assert set(rows(client.get("/jobs", params={"status": "dead"}).text)) == {
        seeded.dead,
        seeded.hostile,
    }
    named = client.get("/jobs", params={"name": "report.build", "tenant": "globex"})
    assert rows(named.text) == [seeded.waiting[2]]
    assert rows(client.get("/jobs", params={"tenant": "acme-shop"}).text) == [
        seeded.completed,
        seeded.waiting[0],
    ]
    assert "No jobs match" in client.get("/jobs", params={"tenant": "nobody"}).text


def test_an_unknown_status_is_a_400_that_names_the_allowed_ones(client: TestClient) -> None:
    page = client.get("/jobs", params={"status": "exploded"})
    assert page.status_code == 400
    allowed = "one of waiting, queued, delayed, running"
    assert f"unknown status &#39;exploded&#39;; {allowed}" in page.text


def test_a_malformed_cursor_is_a_400(client: TestClient) -> None:
    page = client.get("/jobs", params={"cursor": "not-a-cursor"})
    assert page.status_code == 400
    assert 'class="error" id="error"' in page.text


async def test_the_job_list_pages_with_the_stores_cursor() -> None:
    store = MemoryJobStore()
    queue = JobQueue(store)
    ids = [
        (await queue.enqueue("thumbnail.render", {"photo": f"IMG_{n:04d}.jpg"})).job.id
        for n in range(7)
    ]
    with local(make_dashboard(store, page_size=3)) as client:
        seen: list[str] = []
        page = client.get("/jobs", params={"name": "thumbnail.render"})
        assert 'id="first-page"' not in page.text
        while True:
            seen += rows(page.text)
            found = re.search(r'<a href="([^"]+)" id="next-page">', page.text)
            if found is None:
                break
            link = found.group(1).replace("&amp;", "&")
            assert "name=thumbnail.render" in link  # the filter follows the pages
            page = client.get(link)
            assert 'id="first-page"' in page.text
    assert seen == ids


def test_the_detail_page_shows_the_record(client: TestClient, seeded: Seeded) -> None:
    page = client.get(f"/jobs/{seeded.completed}")
    assert page.status_code == 200
    text = page.text
    assert '<span class="job-name">email.receipt</span>' in text
    assert '<span class="status status-completed">completed</span>' in text
    assert 'tenant <a href="/jobs?tenant=acme-shop">acme-shop</a>' in text
    assert '<dd id="attempts">1 of 3</dd>' in text
    assert "&#34;to&#34;: &#34;jörg@acme.example&#34;" in text  # pretty-printed, unicode kept
    assert "&#34;message_id&#34;: &#34;msg-83c1&#34;" in text
    labels = re.findall(r'<span class="label">([^<]+)</span>', text)
    assert labels[0] == "created" and "completed" in labels
    assert 'id="actions"' not in text  # read-only


def test_the_detail_page_shows_the_last_error_of_a_dead_job(
    client: TestClient, seeded: Seeded
) -> None:
    text = client.get(f"/jobs/{seeded.dead}").text
    assert "PaymentDeclined: card ending 4242 declined (東京 gateway" in text
    assert "&#34;customer&#34;: &#34;Zoë Ångström&#34;" in text
    shown = html.unescape(text.split('<pre class="traceback" id="traceback">', 1)[1])
    assert shown.startswith(f"{DECLINED_TRACE}</pre>")  # the whole traceback, as kept


def test_an_unknown_job_is_a_404(client: TestClient) -> None:
    page = client.get("/jobs/0123456789abcdef0123456789abcdef")
    assert page.status_code == 404
    assert "No job <code>0123456789abcdef0123456789abcdef</code>" in page.text


def test_hidden_payloads_show_neither_payload_nor_result(
    store: MemoryJobStore, seeded: Seeded
) -> None:
    with local(make_dashboard(store, show_payloads=False)) as client:
        text = client.get(f"/jobs/{seeded.completed}").text
    assert 'id="payload-hidden"' in text and 'id="result-hidden"' in text
    assert "jörg@acme.example" not in text and "msg-83c1" not in text


def test_the_dead_letter_page_lists_dead_jobs_only(client: TestClient, seeded: Seeded) -> None:
    page = client.get("/dead")
    assert set(rows(page.text)) == {seeded.dead, seeded.hostile}
    assert rows(client.get("/dead", params={"queue": "other"}).text) == [seeded.dead]
    assert rows(client.get("/dead", params={"name": "billing.charge"}).text) == [seeded.dead]
    assert 'id="redrive"' not in page.text  # read-only: no forms


def test_pages_refresh_their_live_part_in_place(store: MemoryJobStore) -> None:
    with local(make_dashboard(store, refresh=2.5)) as client:
        text = client.get("/jobs", params={"status": "dead", "done": "retried"}).text
    assert (
        '<main id="live" hx-get="/jobs?status=dead" hx-trigger="every 2.5s" '
        'hx-select="#live" hx-swap="outerHTML"'
    ) in text
    with local(make_dashboard(store, refresh=0)) as client:
        assert "hx-trigger" not in client.get("/").text


def test_a_queue_gives_the_dashboard_its_store_and_clock(store: MemoryJobStore) -> None:
    later = time.time() + 7200  # two hours on: the last hour finished nothing
    queue = JobQueue(store, clock=lambda: later)
    with local(make_dashboard(queue)) as client:
        text = client.get("/").text
    assert "1 completed" not in text
    assert text.count("0 completed, 0 dead") == 2


def test_make_dashboard_refuses_what_is_not_a_store() -> None:
    with pytest.raises(TypeError, match="needs a job store or a queue"):
        make_dashboard(object())


def test_the_list_shows_each_status_badge(client: TestClient) -> None:
    text = client.get("/jobs").text
    for status in (JobStatus.QUEUED, JobStatus.COMPLETED, JobStatus.DEAD, JobStatus.CANCELLED):
        assert f'<span class="status status-{status.value}">{status.value}</span>' in text


async def test_a_completed_jobs_error_is_shown_as_an_earlier_attempts() -> None:
    """A job that failed, then completed: its ``last_error`` is history, not a failure."""
    from sqsjobs import JobWorker

    store = MemoryJobStore()
    queue = JobQueue(store)
    job = (await queue.enqueue("label.print", {"printer": "Zürich-3"})).job
    calls = []

    def flaky(ctx: object) -> str:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionResetError("imprimante « Zürich-3 » hors ligne")
        return "printed"

    worker = JobWorker(queue, {"label.print": flaky})
    assert await worker.run_once()
    failed = await queue.get(job.id)
    assert failed is not None
    with local(make_dashboard(store)) as client:
        waiting = client.get(f"/jobs/{job.id}")
    assert "<h2>Last error</h2>" in waiting.text and 'id="error-history"' not in waiting.text
    deadline = time.monotonic() + 10
    while (record := await queue.get(job.id)) is not None and record.status != "completed":
        assert time.monotonic() < deadline
        await worker.run_once()
    with local(make_dashboard(store)) as client:
        detail = client.get(f"/jobs/{job.id}")
        listing = client.get("/jobs?status=completed")
    assert "<h2>Error of an earlier attempt</h2>" in detail.text
    assert 'class="error earlier" id="last-error"' in detail.text
    assert "earlier: ConnectionResetError: imprimante" in listing.text
