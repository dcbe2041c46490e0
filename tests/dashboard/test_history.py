"""The job page's history: each attempt and action, in the words ``jobs show`` uses, its
errors redacted as ``last_error`` is, and a dead job run again from the page saying so."""

from __future__ import annotations

import html
import re
import time

from starlette.testclient import TestClient

from sqsjobs import JobQueue, JobStatus, MemoryJobStore
from sqsjobs.contrib.dashboard import make_dashboard
from sqsjobs.core.lifecycle import STOPPING_ERROR

from .conftest import LOCAL, csrf_token, local
from .seed import DECLINED, WORKER, Seeded


def history(page: str) -> list[str]:
    """The history's lines as a reader sees them: time, what happened, the error."""
    found = re.search(r'<ol class="timeline history" id="history">(.*?)</ol>', page, re.S)
    assert found is not None, "the page shows no history"
    items = re.findall(r"<li[^>]*>(.*?)</li>", found.group(1), re.S)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", item)).split()) for item in items]


def test_a_dead_jobs_page_shows_its_attempt_and_error(client: TestClient, seeded: Seeded) -> None:
    [line] = history(client.get(f"/jobs/{seeded.dead}").text)
    assert re.fullmatch(
        rf"\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{{3}} UTC dead after attempt 1 on {WORKER} "
        rf"\(ran \d+\.\d s\) {re.escape(DECLINED)}",
        line,
    ), line


def test_hidden_payloads_leave_an_entrys_error_its_class(
    store: MemoryJobStore, seeded: Seeded
) -> None:
    with local(make_dashboard(store, show_payloads=False)) as hidden:
        page = hidden.get(f"/jobs/{seeded.dead}").text
    [line] = history(page)
    assert line.endswith(") PaymentDeclined") and "4242" not in page


def test_a_dead_job_retried_from_the_page_says_it_died_and_who_ran_it_again(
    acting: TestClient, store: MemoryJobStore, seeded: Seeded
) -> None:
    form = {"csrf_token": csrf_token(acting.get(f"/jobs/{seeded.dead}").text)}
    own = {"origin": LOCAL, "sec-fetch-site": "same-origin"}
    done = acting.post(f"/jobs/{seeded.dead}/retry", data=form, headers=own, follow_redirects=False)
    assert done.status_code == 303
    page = acting.get(f"/jobs/{seeded.dead}").text
    assert re.search(
        r'<dd id="revived">retried by dashboard: queued, <time>[^<]+</time></dd>', page
    ), page
    lines = history(page)
    assert lines[0].split(" UTC ", 1)[1].startswith(f"dead after attempt 1 on {WORKER}")
    assert lines[1].endswith("retried by dashboard: queued")
    assert '<dd id="attempts">0 of 3</dd>' in page  # back to 0, its old error beside it

    form = {"csrf_token": csrf_token(page)}
    assert acting.post(f"/jobs/{seeded.dead}/cancel", data=form, headers=own).status_code == 200
    assert history(acting.get(f"/jobs/{seeded.dead}").text)[-1].endswith("cancelled by dashboard")


async def test_a_long_history_says_how_many_entries_it_left_out() -> None:
    store = MemoryJobStore()
    job = (await JobQueue(store).enqueue("sync.inventory", {"shop": "Åre"}, tenant="acme")).job
    for n in range(12):
        [run] = await store.claim("default", f"worker-{n}", time.time())
        assert await store.release(job.id, run.lease_token or "", STOPPING_ERROR, time.time())
    with local(make_dashboard(store)) as client:
        page = client.get(f"/jobs/{job.id}").text
    assert "2 earlier entries not kept; the last 10 follow." in page
    lines = history(page)
    assert len(lines) == 10 and all(STOPPING_ERROR in line for line in lines)
    assert "attempt 1 released on worker-2" in lines[0]


def test_a_job_nothing_happened_to_says_so(client: TestClient, seeded: Seeded) -> None:
    page = client.get(f"/jobs/{seeded.waiting[0]}").text
    assert '<p class="muted" id="history-none">Nothing has happened to it yet.</p>' in page
    assert 'id="revived"' not in page


def test_a_completed_jobs_page_shows_its_one_entry(client: TestClient, seeded: Seeded) -> None:
    [line] = history(client.get(f"/jobs/{seeded.completed}").text)
    assert line.endswith("attempt 1 completed")
    assert JobStatus.COMPLETED.value in client.get(f"/jobs/{seeded.completed}").text
