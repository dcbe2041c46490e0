"""Take the screenshots of docs/images/dashboard/ with the browser tests' own tooling.

    python -m tests.dashboard.screenshots    # from the repository root, dev extras installed

It starts the AWS emulator, makes an ``SqsJobStore`` with three queues, writes a working
hour's worth of jobs through the store's SPI (the instants passed as ``now`` spread the
completions over the last hour, so the throughput bars have something to show), serves
the dashboard with actions on, and saves one PNG per page.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

from selenium.webdriver.remote.webdriver import WebDriver

from sqsjobs import EnqueueRequest, JobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.contrib.dashboard import make_dashboard
from sqsjobs.testing import local_aws
from tests.aws.emulator import ENVIRONMENT

from .browser import chromium, served, wait_for
from .seed import WORKER

OUT = Path(__file__).resolve().parents[2] / "docs" / "images" / "dashboard"
TENANTS = ("acme-shop", "globex", "initech", "umbrella")
CUSTOMERS = ("Jörg Müller", "Zoë Ångström", "Renée Côté", "Łukasz Żółć", "佐藤 花子", "Ana Muñoz")
ERRORS = {  # why each kind of job died
    "billing.charge": "PaymentDeclined: card ending 4242 declined (insufficient funds)",
    "email.receipt": "SMTPRecipientsRefused: 550 5.1.1 <renee.cote@example.org>: mailbox "
    "unavailable",
    "email.welcome": "SMTPRecipientsRefused: 550 5.1.1 <lukasz@example.pl>: user unknown",
    "report.build": "TimeoutError: job timed out after 30.0 s (report 2026-11 for umbrella)",
    "thumbnail.render": "UnidentifiedImageError: cannot identify image file 'IMG_0398.HEIC'",
}


async def populate(store: SqsJobStore) -> str:
    """Write the hour of jobs; the id of a dead job to show in full."""
    rng = random.Random(20261201)
    now = time.time()
    moments = sorted((now - rng.uniform(30, 3500) for _ in range(54)), reverse=True)
    current = [now]
    queue = JobQueue(store, default_max_attempts=3, clock=lambda: current[0])
    finished = []
    for n in range(54):
        tenant = rng.choice(TENANTS)
        name, target = rng.choice(
            [
                ("email.receipt", "emails"),
                ("email.welcome", "emails"),
                ("thumbnail.render", "default"),
                ("report.build", "reports"),
                ("billing.charge", "default"),
            ]
        )
        payload = {"customer": rng.choice(CUSTOMERS), "order": f"SO-{48_213 + n}", "tenant": tenant}
        finished.append(EnqueueRequest(name, payload, queue=target, tenant=tenant))
    results = []
    for request, moment in zip(finished, moments, strict=True):
        current[0] = moment  # each created a moment before it finishes
        results.append(await queue.enqueue_many([request]))
    order = {result.job.id: index for index, [result] in enumerate(results)}
    finishing = {result.job.id: result.job.created_at.timestamp() + 1.25 for [result] in results}
    dead_id = ""
    deadline = time.monotonic() + 60
    while order and time.monotonic() < deadline:
        for target in ("default", "emails", "reports"):
            for job in await store.claim(target, WORKER, time.time(), limit=10, wait=0.2):
                index = order.pop(job.id)
                at = finishing[job.id] + rng.uniform(0.05, 0.9)
                token = job.lease_token or ""
                if index % 11 == 3:
                    await store.fail(job.id, token, ERRORS[job.name], None, at)
                    dead_id = dead_id or job.id
                else:
                    result = {"delivered": True, "ms": rng.randint(40, 900)}
                    await store.complete(job.id, token, at, result)
    waiting = [
        EnqueueRequest(
            "email.welcome",
            {"to": "佐藤 花子 <hanako@example.jp>"},
            queue="emails",
            tenant="initech",
        ),
        EnqueueRequest(
            "report.build", {"month": "2026-11", "format": "pdf"}, queue="reports", tenant="globex"
        ),
        EnqueueRequest(
            "report.build",
            {"month": "2026-12", "format": "csv"},
            queue="reports",
            tenant="acme-shop",
        ),
        EnqueueRequest("thumbnail.render", {"photo": "IMG_0412.HEIC"}, tenant="umbrella"),
        EnqueueRequest("cleanup.sessions", {"older_than_days": 30}, delay=900),
    ]
    live = JobQueue(store, default_max_attempts=3)  # the real clock: enqueued just now
    running = await live.enqueue("report.build", {"month": "2026-10"}, queue="reports")
    [claimed] = await store.claim("reports", WORKER, time.time(), wait=2.0)
    assert claimed.id == running.job.id
    await live.enqueue_many(waiting)
    return dead_id


def shoot(driver: WebDriver, url: str, name: str, ready: str) -> None:
    driver.get(url)
    wait_for(lambda: driver.find_elements("css selector", ready), ready)
    height = driver.execute_script("return document.documentElement.scrollHeight")  # type: ignore[no-untyped-call]
    metrics = {"width": 1360, "height": max(600, min(int(height), 1600)), "deviceScaleFactor": 1}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "mobile": False})
    driver.save_screenshot(str(OUT / f"{name}.png"))
    print(f"wrote {OUT / name}.png")


def main() -> None:
    import os

    os.environ.update(ENVIRONMENT)
    OUT.mkdir(parents=True, exist_ok=True)
    with local_aws() as endpoint:
        store = SqsJobStore.create(
            "shop",
            queues=("default", "emails", "reports"),
            max_receive_count=5,
            endpoint_url=endpoint,
        )

        async def run() -> str:
            return await populate(store)

        dead_id = asyncio.run(run())
        store.close()
        viewer = SqsJobStore.create(
            "shop",
            queues=("default", "emails", "reports"),
            max_receive_count=5,
            endpoint_url=endpoint,
        )
        app = make_dashboard(viewer, actions=True, refresh=0, title="sqsjobs · shop")
        with served(app) as base, chromium() as driver:
            shoot(driver, f"{base}/", "overview", "#queues")
            shoot(driver, f"{base}/jobs?queue=reports", "jobs", "#jobs")
            shoot(driver, f"{base}/jobs/{dead_id}", "job", "#timeline")
            shoot(driver, f"{base}/dead", "dead", "#dead-jobs")


if __name__ == "__main__":
    main()
