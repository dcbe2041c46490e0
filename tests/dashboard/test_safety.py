"""Safe by default: escaped data, read-only, CSRF on every action, the auth hook, headers."""

from __future__ import annotations

import time

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from sqsjobs import JobStatus, MemoryJobStore
from sqsjobs.contrib.dashboard import make_dashboard

from .conftest import csrf_token, local
from .seed import HOSTILE_ERROR, HOSTILE_NAME, Seeded

MARKUP = ("<script", "<img", "<b>")


@pytest.mark.parametrize("page", ["/", "/jobs", "/dead", "/jobs?status=dead", "detail"])
def test_stored_text_is_shown_as_text_never_as_markup(
    acting: TestClient, seeded: Seeded, page: str
) -> None:
    url = f"/jobs/{seeded.hostile}" if page == "detail" else page
    html = acting.get(url).text
    for fragment in MARKUP:
        assert fragment not in html.replace("<script src=", "")
    if page in ("/jobs", "/dead", "detail"):
        assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html  # the name, as text


def test_the_detail_page_escapes_name_error_and_payload(acting: TestClient, seeded: Seeded) -> None:
    html = acting.get(f"/jobs/{seeded.hostile}").text
    assert HOSTILE_NAME not in html and HOSTILE_ERROR not in html
    assert "ValueError: &lt;script&gt;alert(&#34;error&#34;)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(&#39;payload&#39;)&lt;/script&gt;" in html
    assert html.count("<script") == 1  # the dashboard's own htmx, nothing else


def test_every_response_forbids_inline_script_and_framing(client: TestClient) -> None:
    headers = client.get("/").headers
    policy = headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"


def test_a_read_only_dashboard_refuses_every_action(
    client: TestClient, store: MemoryJobStore, seeded: Seeded
) -> None:
    token = csrf_token(make_form_page(store, seeded))
    for url in (f"/jobs/{seeded.dead}/retry", f"/jobs/{seeded.waiting[0]}/cancel", "/dead/redrive"):
        refused = client.post(url, data={"csrf_token": token})
        assert refused.status_code == 403
        assert "read-only" in refused.text
    assert 'id="actions"' not in client.get(f"/jobs/{seeded.dead}").text
    assert status_of(store, seeded.dead) is JobStatus.DEAD
    assert status_of(store, seeded.waiting[0]) is JobStatus.QUEUED


def make_form_page(store: MemoryJobStore, seeded: Seeded) -> str:
    """A page with action forms, from a dashboard with actions on (for a token's shape)."""
    with local(make_dashboard(store, actions=True)) as other:
        return other.get(f"/jobs/{seeded.dead}").text


def status_of(store: MemoryJobStore, job_id: str) -> JobStatus:
    job = store.sync.get(job_id, time.time())
    assert job is not None
    return job.status


def test_a_get_never_changes_anything(
    acting: TestClient, store: MemoryJobStore, seeded: Seeded
) -> None:
    for url in (f"/jobs/{seeded.dead}/retry", f"/jobs/{seeded.waiting[0]}/cancel", "/dead/redrive"):
        assert acting.get(url).status_code == 405
    assert status_of(store, seeded.dead) is JobStatus.DEAD
    assert status_of(store, seeded.waiting[0]) is JobStatus.QUEUED


def test_an_action_without_the_right_csrf_token_is_refused(
    acting: TestClient, store: MemoryJobStore, seeded: Seeded
) -> None:
    token = csrf_token(acting.get(f"/jobs/{seeded.dead}").text)
    url = f"/jobs/{seeded.dead}/retry"
    assert acting.post(url).status_code == 403  # no token at all
    assert acting.post(url, data={"csrf_token": "0" * 64}).status_code == 403
    # The right token from another browser: this one's cookie is not the one it was made for.
    with local(make_dashboard(store, actions=True)) as stranger:
        stranger.get("/")
        assert stranger.post(url, data={"csrf_token": token}).status_code == 403
    # A page's token without its cookie (a cross-site form post carries no cookie).
    acting.cookies.clear()
    assert acting.post(url, data={"csrf_token": token}).status_code == 403
    assert status_of(store, seeded.dead) is JobStatus.DEAD


def test_tokens_are_tied_to_the_dashboards_secret(store: MemoryJobStore, seeded: Seeded) -> None:
    """Two processes serving one dashboard agree on tokens only when given one secret."""
    secret = b"k8s-secret-\xf0\x9f\x94\x91-2026"
    with local(make_dashboard(store, actions=True, secret=secret)) as first:
        token = csrf_token(first.get(f"/jobs/{seeded.dead}").text)
        cookies = dict(first.cookies)
    with local(make_dashboard(store, actions=True, secret=b"another")) as wrong:
        wrong.cookies.update(cookies)
        assert (
            wrong.post(f"/jobs/{seeded.dead}/retry", data={"csrf_token": token}).status_code == 403
        )
    with local(make_dashboard(store, actions=True, secret=secret)) as second:
        second.cookies.update(cookies)
        done = second.post(f"/jobs/{seeded.dead}/retry", data={"csrf_token": token})
    assert done.status_code == 200 and "Retried" in done.text
    assert status_of(store, seeded.dead) is JobStatus.QUEUED


def test_retry_with_its_token_queues_the_dead_job_again(
    acting: TestClient, store: MemoryJobStore, seeded: Seeded
) -> None:
    token = csrf_token(acting.get(f"/jobs/{seeded.dead}").text)
    done = acting.post(
        f"/jobs/{seeded.dead}/retry", data={"csrf_token": token}, follow_redirects=False
    )
    assert done.status_code == 303
    assert done.headers["location"] == f"/jobs/{seeded.dead}?done=retried"
    job = store.sync.get(seeded.dead, time.time())
    assert job is not None and (job.status, job.attempts) == (JobStatus.QUEUED, 0)
    again = acting.post(f"/jobs/{seeded.dead}/retry", data={"csrf_token": token})
    assert "Not retried: only a dead job" in again.text


def test_cancel_with_its_token_cancels_a_waiting_job(
    acting: TestClient, store: MemoryJobStore, seeded: Seeded
) -> None:
    job_id = seeded.waiting[1]
    page = acting.get(f"/jobs/{job_id}").text
    assert f'action="/jobs/{job_id}/cancel"' in page and f"/jobs/{job_id}/retry" not in page
    done = acting.post(f"/jobs/{job_id}/cancel", data={"csrf_token": csrf_token(page)})
    assert '<p class="notice" id="notice">Cancelled.</p>' in done.text
    assert status_of(store, job_id) is JobStatus.CANCELLED


def test_redrive_by_name_sends_back_only_that_handlers_dead_jobs(
    acting: TestClient, store: MemoryJobStore, seeded: Seeded
) -> None:
    page = acting.get("/dead", params={"name": "billing.charge"}).text
    assert "Redrive every “billing.charge” job" in page
    form = {"csrf_token": csrf_token(page), "name": "billing.charge", "queue": ""}
    done = acting.post("/dead/redrive", data=form)
    assert "dead jobs sent back to their queues: 1" in done.text
    assert status_of(store, seeded.dead) is JobStatus.QUEUED
    assert status_of(store, seeded.hostile) is JobStatus.DEAD


def test_a_notice_never_echoes_the_request(acting: TestClient) -> None:
    text = acting.get("/dead", params={"done": "redriven", "n": "<b>7</b>"}).text
    assert "sent back to their queues: ?" in text and "<b>7" not in text
    assert 'id="notice"' not in acting.get("/", params={"done": "<script>"}).text


def host_app(dashboard: Starlette) -> Starlette:
    async def home(request: Request) -> PlainTextResponse:
        return PlainTextResponse("the host app")

    return Starlette(routes=[Route("/", home), Mount("/ops/jobs", app=dashboard)])


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_auth_hook_decides_each_request(
    store: MemoryJobStore, seeded: Seeded, asynchronous: bool
) -> None:
    asked: list[str] = []

    def staff_only(request: Request) -> bool:
        asked.append(request.url.path)
        return request.headers.get("x-role") == "staff"

    async def staff_only_async(request: Request) -> bool:
        return staff_only(request)

    hook = staff_only_async if asynchronous else staff_only
    app = host_app(make_dashboard(store, actions=True, auth=hook))
    with local(app) as client:
        assert client.get("/").text == "the host app"  # the host's own routes: not asked
        refused = client.get("/ops/jobs/")
        assert refused.status_code == 403 and "access check refused" in refused.text
        assert client.get("/ops/jobs/static/htmx.min.js").status_code == 403
        staff = {"x-role": "staff"}
        page = client.get(f"/ops/jobs/jobs/{seeded.dead}", headers=staff)
        assert page.status_code == 200
        token = csrf_token(page.text)
        url = f"/ops/jobs/jobs/{seeded.dead}/retry"
        assert client.post(url, data={"csrf_token": token}).status_code == 403
        assert status_of(store, seeded.dead) is JobStatus.DEAD
        done = client.post(url, data={"csrf_token": token}, headers=staff, follow_redirects=False)
        assert done.headers["location"] == f"/ops/jobs/jobs/{seeded.dead}?done=retried"
    assert asked[:3] == [
        "/ops/jobs/",
        "/ops/jobs/static/htmx.min.js",
        f"/ops/jobs/jobs/{seeded.dead}",
    ]
    assert status_of(store, seeded.dead) is JobStatus.QUEUED


def test_a_hook_that_answers_anything_but_true_refuses(store: MemoryJobStore) -> None:
    app = make_dashboard(store, auth=lambda request: "yes")  # type: ignore[arg-type,return-value]
    with local(app) as client:
        assert client.get("/").status_code == 403


def test_a_mounted_dashboard_links_under_its_prefix(store: MemoryJobStore, seeded: Seeded) -> None:
    with local(host_app(make_dashboard(store, actions=True))) as client:
        page = client.get("/ops/jobs/")
        assert 'href="/ops/jobs/static/dashboard.css"' in page.text
        assert 'href="/ops/jobs/jobs?status=dead"' in page.text
        assert "Path=/ops/jobs" in page.headers["set-cookie"]
        assert client.get("/ops/jobs/static/htmx.min.js").text.startswith("var htmx=")


def test_pause_and_resume_with_their_token_hold_and_release_the_queue(
    acting: TestClient, store: MemoryJobStore
) -> None:
    page = acting.get("/").text
    assert 'action="/queues/default/pause"' in page and ">Pause</button>" in page
    token = csrf_token(page)
    assert acting.post("/queues/default/pause").status_code == 403  # no token: nothing
    assert store.sync.paused(time.time()) == {}
    done = acting.post("/queues/default/pause", data={"csrf_token": token})
    assert done.status_code == 200 and "Paused: within seconds no worker" in done.text
    assert set(store.sync.paused(time.time())) == {"default"}
    assert 'class="paused"' in done.text and 'action="/queues/default/resume"' in done.text
    resumed = acting.post("/queues/default/resume", data={"csrf_token": token})
    assert resumed.status_code == 200 and "Resumed" in resumed.text
    assert store.sync.paused(time.time()) == {}
    refused = acting.post("/queues/no such queue/pause", data={"csrf_token": token})
    assert refused.status_code == 400 and "queue name" in refused.text
    assert store.sync.paused(time.time()) == {}


def test_a_read_only_dashboard_shows_a_pause_but_offers_no_button(
    client: TestClient, store: MemoryJobStore
) -> None:
    store.sync.pause("default", time.time() - 90)
    page = client.get("/").text
    assert 'class="paused"' in page and "paused 1m" in page
    assert ">Pause</button>" not in page and ">Resume</button>" not in page
