"""The dashboard in a real browser: headless Chromium clicks through it like an operator.

Overview → job list (filtered to dead jobs) → a dead job's page → Retry, then the record
is read back from the store. Also: a page updates itself in place (no reload), the
markup stored in a job's name, error and payload stays text in the browser too, and a
form on another local origin cannot take an action, even holding a valid token.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from sqsjobs import JobQueue, JobStatus, MemoryJobStore
from sqsjobs.contrib.dashboard import make_dashboard

from .browser import chromium, require_browser, served, wait_for
from .seed import HOSTILE_ERROR, HOSTILE_NAME, Seeded, seed
from .test_safety import status_of

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    require_browser()
    with chromium() as driver:
        yield driver


@pytest.fixture
def memory_store() -> tuple[MemoryJobStore, Seeded]:
    store = MemoryJobStore()
    return store, asyncio.run(seed(store))


def count_in(driver: WebDriver, queue: str, status: str) -> str:
    """A count of the overview's table; empty if the row was being swapped just then."""
    try:
        cell = driver.find_element(By.CSS_SELECTOR, f'tr[data-queue="{queue}"] td.count-{status}')
        return str(cell.text)
    except StaleElementReferenceException:
        return ""


def test_an_operator_retries_a_dead_job_from_the_overview(
    browser: WebDriver, memory_store: tuple[MemoryJobStore, Seeded]
) -> None:
    store, seeded = memory_store
    driver = browser
    with served(make_dashboard(store, actions=True, refresh=30)) as base:
        driver.get(f"{base}/")
        assert count_in(driver, "other", "dead") == "1"
        assert count_in(driver, "default", "queued") == "3"
        # Nothing the page needs is refused by its own Content-Security-Policy.
        assert [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"] == []
        driver.find_element(By.ID, "nav-jobs").click()
        wait_for(lambda: driver.current_url.endswith("/jobs"), "the job list")
        Select(driver.find_element(By.NAME, "status")).select_by_value("dead")
        Select(driver.find_element(By.NAME, "queue")).select_by_value("other")
        driver.find_element(By.ID, "apply-filters").click()
        wait_for(lambda: "status=dead" in driver.current_url, "the filtered list")
        links = driver.find_elements(By.CSS_SELECTOR, "#jobs a.job-link")
        assert [link.text for link in links] == ["billing.charge"]
        links[0].click()
        wait_for(lambda: driver.current_url.endswith(f"/jobs/{seeded.dead}"), "the job's page")
        error = driver.find_element(By.ID, "last-error").text
        assert "東京 gateway" in error
        driver.find_element(By.CSS_SELECTOR, "#actions button.primary").click()
        notice = wait_for(
            lambda: driver.find_elements(By.ID, "notice"),
            "the retry's notice",
        )
        assert notice[0].text.startswith("Retried")
        badge = driver.find_element(By.CSS_SELECTOR, "h1 .status").text
        assert badge == "queued"
    job = store.sync.get(seeded.dead, time.time())
    assert job is not None
    assert (job.status, job.attempts, job.last_error) == (
        JobStatus.QUEUED,
        0,
        "PaymentDeclined: card ending 4242 declined (東京 gateway said: insufficient funds)",
    )


def test_the_overview_updates_in_place_without_a_reload(
    browser: WebDriver, memory_store: tuple[MemoryJobStore, Seeded]
) -> None:
    store, _ = memory_store
    driver = browser
    with served(make_dashboard(store, refresh=0.5)) as base:
        driver.get(f"{base}/")
        driver.execute_script("window.sameDocument = 'kept';")  # type: ignore[no-untyped-call]
        assert count_in(driver, "default", "queued") == "3"
        asyncio.run(JobQueue(store).enqueue("report.build", {"month": "2026-12"}, tenant="initech"))
        wait_for(lambda: count_in(driver, "default", "queued") == "4", "the new count")
        assert driver.execute_script("return window.sameDocument;") == "kept"  # type: ignore[no-untyped-call]


def test_stored_markup_stays_text_in_the_browser(
    browser: WebDriver, memory_store: tuple[MemoryJobStore, Seeded]
) -> None:
    store, seeded = memory_store
    driver = browser
    with served(make_dashboard(store, refresh=0)) as base:
        for path in ("/jobs", "/dead", f"/jobs/{seeded.hostile}"):
            driver.get(f"{base}{path}")
            with pytest.raises(NoAlertPresentException):
                driver.switch_to.alert.text  # noqa: B018  (raises: no alert opened)
            assert driver.find_elements(By.CSS_SELECTOR, "main img, main b") == []
        assert driver.find_element(By.CSS_SELECTOR, "h1 .job-name").text == HOSTILE_NAME
        assert driver.find_element(By.ID, "last-error").text == HOSTILE_ERROR
        assert "<script>alert('payload')</script>" in driver.find_element(By.ID, "payload").text


def test_another_local_origin_cannot_post_an_action_even_with_a_leaked_token(
    browser: WebDriver, memory_store: tuple[MemoryJobStore, Seeded]
) -> None:
    """A page on another port of 127.0.0.1 is same-site: the browser sends the Strict
    cookie with its form. Given the token too, only the origin check stands in the way."""
    store, seeded = memory_store
    driver = browser
    job_id = seeded.waiting[2]
    with served(make_dashboard(store, actions=True, refresh=0)) as base:
        driver.get(f"{base}/jobs/{job_id}")
        token = driver.find_element(By.NAME, "csrf_token").get_attribute("value")
        form = (
            f'<form method="post" action="{base}/jobs/{job_id}/cancel">'
            f'<input type="hidden" name="csrf_token" value="{token}">'
            '<button id="go" type="submit">Win a prize</button></form>'
        )

        async def lure(request: Request) -> HTMLResponse:
            return HTMLResponse(f"<!doctype html><title>prize</title>{form}")

        with served(Starlette(routes=[Route("/", lure)])) as elsewhere:
            assert elsewhere != base
            driver.get(f"{elsewhere}/")
            driver.find_element(By.ID, "go").click()
            answer = wait_for(
                lambda: (
                    any(word in driver.page_source for word in ("Forbidden", 'id="notice"'))
                    and driver.page_source
                ),
                "the dashboard's answer",
            )
    assert "Sec-Fetch-Site: same-site" in answer
    assert status_of(store, job_id) is JobStatus.QUEUED
