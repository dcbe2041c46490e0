"""Who the dashboard answers: the ``Host`` it is asked for, and where an action comes from.

A page on another site can rebind its own name to 127.0.0.1 (DNS rebinding): the
browser then sends that page's requests to the dashboard as same-origin ones, with the
attacker's name in ``Host``. Only loopback names and ``allowed_hosts`` are answered. An
action must also come from the dashboard's own origin (``Origin``, ``Sec-Fetch-Site``),
whatever token it carries.
"""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from starlette.testclient import TestClient
from starlette.types import Message

from sqsjobs import JobStatus, MemoryJobStore
from sqsjobs.contrib.dashboard import make_dashboard

from .conftest import LOCAL, csrf_token, local
from .seed import Seeded
from .test_safety import status_of


def test_a_page_asked_for_another_host_is_a_400_naming_it(client: TestClient) -> None:
    for path in ("/", "/jobs", "/static/htmx.min.js"):
        refused = client.get(path, headers={"host": "rebound.evil.example:8321"})
        assert refused.status_code == 400
        assert refused.headers["content-type"].startswith("text/plain")
        assert "Host 'rebound.evil.example:8321'" in refused.text
        assert "allowed_hosts" in refused.text and "--allowed-host" in refused.text
        assert "<tr" not in refused.text


def test_a_rebound_page_cannot_cancel_a_job(
    store: MemoryJobStore, seeded: Seeded, acting: TestClient
) -> None:
    """The attack as reproduced: same-origin for the browser, so cookie and token work."""
    job_id = seeded.waiting[0]
    with TestClient(
        make_dashboard(store, actions=True), base_url="http://evil.example:8321"
    ) as evil:
        assert evil.get(f"/jobs/{job_id}").status_code == 400
        # Even with a token and its cookie from a page the dashboard did serve:
        token = csrf_token(acting.get(f"/jobs/{job_id}").text)
        evil.cookies.update(dict(acting.cookies))
        done = evil.post(f"/jobs/{job_id}/cancel", data={"csrf_token": token})
    assert done.status_code == 400
    assert status_of(store, job_id) is JobStatus.QUEUED


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "127.0.0.1:8321", "localhost:9000", "LocalHost", "[::1]:8321", "[::1]"],
)
def test_loopback_names_are_answered_on_any_port(client: TestClient, host: str) -> None:
    page = client.get("/", headers={"host": host})
    assert page.status_code == 200 and '<tr data-queue="default">' in page.text


@pytest.mark.parametrize(
    "host", ["127.0.0.2", "localhost.evil.example", "[::2]", "127.0.0.1:port", "[::1", ""]
)
def test_other_and_malformed_hosts_are_refused(client: TestClient, host: str) -> None:
    assert client.get("/", headers={"host": host}).status_code == 400


async def test_a_request_without_a_host_header_is_a_400(store: MemoryJobStore) -> None:
    """HTTP/1.0 may leave it out; then nothing says which name was asked for."""
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "query_string": b""}
    await make_dashboard(store)({**scope, "http_version": "1.0", "scheme": "http"}, receive, send)
    assert sent[0]["status"] == 400 and b"no Host header" in sent[1]["body"]


def test_allowed_hosts_adds_names_to_the_loopback_ones(store: MemoryJobStore) -> None:
    app = make_dashboard(store, allowed_hosts=["ops.example.com", "[FD00::17]", "10.0.3.17"])
    with local(app) as client:
        for host in ("ops.example.com", "OPS.Example.com:443", "ops.example.com.", "[fd00::17]"):
            assert client.get("/", headers={"host": host}).status_code == 200, host
        assert client.get("/", headers={"host": "10.0.3.17:8321"}).status_code == 200
        assert client.get("/").status_code == 200  # 127.0.0.1 still
        refused = client.get("/", headers={"host": "jobs.example.com"})
    assert refused.status_code == 400 and "Host 'jobs.example.com'" in refused.text


def test_a_star_answers_any_host_for_an_app_that_checks_hosts_itself(
    store: MemoryJobStore,
) -> None:
    app = Starlette(routes=[Mount("/ops/jobs", app=make_dashboard(store, allowed_hosts=["*"]))])
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=["*.shop.example"])
    with TestClient(app, base_url="http://eu.shop.example") as client:
        for host in ("eu.shop.example", "us.shop.example:8443"):
            page = client.get("/ops/jobs/", headers={"host": host})
            assert page.status_code == 200 and '<tr data-queue="default">' in page.text
        refused = client.get("/ops/jobs/", headers={"host": "evil.example"})
    assert refused.text == "Invalid host header"  # the host app's own refusal


def test_a_mounted_dashboard_checks_host_and_its_host_app_does_not(
    store: MemoryJobStore,
) -> None:
    async def home(request: Request) -> PlainTextResponse:
        return PlainTextResponse("the shop")

    dashboard = make_dashboard(store, allowed_hosts=["admin.shop.example"])
    app = Starlette(routes=[Route("/", home), Mount("/ops/jobs", app=dashboard)])
    with TestClient(app, base_url="http://www.shop.example") as client:
        assert client.get("/").text == "the shop"
        refused = client.get("/ops/jobs/")
        assert refused.status_code == 400 and "Host 'www.shop.example'" in refused.text
        page = client.get("/ops/jobs/", headers={"host": "admin.shop.example"})
    assert page.status_code == 200 and 'href="/ops/jobs/jobs"' in page.text


@pytest.mark.parametrize(
    ("given", "complaint"),
    [
        ("ops.example.com", "a list of host names"),
        (["ops.example.com:8443"], "without a port"),
        (["https://ops.example.com"], "a host name"),
        ([""], "a host name"),
        (["ops example"], "a host name"),
        ([b"ops.example.com"], "a host name"),
    ],
)
def test_make_dashboard_refuses_what_is_not_a_host_name(
    store: MemoryJobStore, given: object, complaint: str
) -> None:
    with pytest.raises(ValueError, match="allowed_hosts") as refused:
        make_dashboard(store, allowed_hosts=given)  # type: ignore[arg-type]
    assert complaint in str(refused.value)


def test_an_idn_host_is_allowed_by_its_unicode_name(store: MemoryJobStore) -> None:
    with local(make_dashboard(store, allowed_hosts=["bücher.example"])) as client:
        assert client.get("/", headers={"host": "xn--bcher-kva.example"}).status_code == 200


def retry_form(client: TestClient, seeded: Seeded) -> dict[str, str]:
    return {"csrf_token": csrf_token(client.get(f"/jobs/{seeded.dead}").text)}


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "http://127.0.0.1:9999",  # another port: another origin
        "https://127.0.0.1:8321",  # another scheme
        "http://localhost:8321",  # another allowed name is still another origin
        "null",  # a sandboxed frame or a data: page
    ],
)
def test_an_action_from_another_origin_is_a_403(
    acting: TestClient, store: MemoryJobStore, seeded: Seeded, origin: str
) -> None:
    form = retry_form(acting, seeded)
    done = acting.post(f"/jobs/{seeded.dead}/retry", data=form, headers={"origin": origin})
    assert done.status_code == 403
    assert f"Origin '{origin}'" in done.text
    assert status_of(store, seeded.dead) is JobStatus.DEAD


@pytest.mark.parametrize("site", ["cross-site", "same-site", "CROSS-SITE"])
def test_an_action_the_browser_says_came_from_another_site_is_a_403(
    acting: TestClient, store: MemoryJobStore, seeded: Seeded, site: str
) -> None:
    form = retry_form(acting, seeded)
    done = acting.post(f"/jobs/{seeded.dead}/retry", data=form, headers={"sec-fetch-site": site})
    assert done.status_code == 403 and "Sec-Fetch-Site" in done.text
    assert status_of(store, seeded.dead) is JobStatus.DEAD


def test_an_action_from_the_dashboards_own_page_goes_through(
    acting: TestClient, store: MemoryJobStore, seeded: Seeded
) -> None:
    """What a browser sends for the page's own form: its origin, ``same-origin``."""
    form = retry_form(acting, seeded)
    own = {"origin": LOCAL, "sec-fetch-site": "same-origin"}
    done = acting.post(f"/jobs/{seeded.dead}/retry", data=form, headers=own, follow_redirects=False)
    assert done.status_code == 303
    assert status_of(store, seeded.dead) is JobStatus.QUEUED


def test_the_own_origin_follows_the_host_and_the_default_port(
    store: MemoryJobStore, seeded: Seeded
) -> None:
    app = make_dashboard(store, actions=True, allowed_hosts=["ops.example.com"])
    with TestClient(app, base_url="https://ops.example.com") as client:
        form = retry_form(client, seeded)
        url = f"/jobs/{seeded.dead}/retry"
        assert (
            client.post(url, data=form, headers={"origin": "http://ops.example.com"}).status_code
            == 403
        )
        done = client.post(
            url,
            data=form,
            headers={"origin": "https://ops.example.com:443"},
            follow_redirects=False,
        )
    assert done.status_code == 303
    assert status_of(store, seeded.dead) is JobStatus.QUEUED


def test_the_origin_check_is_for_actions_only(client: TestClient) -> None:
    """A GET from a link on another site is an ordinary visit (and changes nothing)."""
    page = client.get(
        "/", headers={"origin": "http://evil.example", "sec-fetch-site": "cross-site"}
    )
    assert page.status_code == 200
