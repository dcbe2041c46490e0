"""The overview turns red, with the reason in words, when work is not moving.

Jobs wait and no worker serves their queue; the job due first has waited minutes; jobs
wait under a name no live worker serves (the dead-letter queue is in test_sqs_store.py).
On a memory store with a fake clock: its workers' presence records are its own.
"""

from __future__ import annotations

import html

from sqsjobs import JobQueue, MemoryJobStore
from sqsjobs.contrib.dashboard import make_dashboard
from sqsjobs.core.presence import PRESENCE_TTL, WorkerPresence
from sqsjobs.core.times import utc

from ..support.clock import FakeClock
from .conftest import local


def overview(store: MemoryJobStore, clock: FakeClock) -> str:
    with local(make_dashboard(store, clock=clock)) as client:
        page = client.get("/")
    assert page.status_code == 200
    return page.text


def row(page: str, queue: str) -> str:
    return page.split(f'<tr data-queue="{queue}">')[1].split("</tr>")[0]


def attention(page: str) -> list[str]:
    if 'id="attention"' not in page:
        return []
    section = page.split('id="attention"')[1].split("</section>")[0]
    return [html.unescape(item.split("</li>")[0]) for item in section.split("<li>")[1:]]


async def test_work_waiting_with_no_worker_for_minutes_is_red_with_its_reasons() -> None:
    clock = FakeClock()
    store = MemoryJobStore(clock=clock)
    queue = JobQueue(store, clock=clock)
    for n in range(5):
        await queue.enqueue("report.build", {"n": n})
    clock.advance(316.0)
    page = overview(store, clock)
    assert attention(page) == [
        "5 jobs wait and no worker serves queue default: start one, or check the workers' logs",
        "The oldest job of queue default has waited 5m 16s, more than 3m 00s: add workers, "
        "or look for stuck ones",
    ]
    default = row(page, "default")
    assert '<th class="alert" title="Needs attention: see above">' in default
    assert '<td class="num workers alert">0</td>' in default
    assert '<td class="last-claim">never</td>' in default
    assert '<td class="num oldest alert">5m 16s</td>' in default


async def test_a_job_name_no_live_worker_serves_is_named() -> None:
    clock = FakeClock()
    store = MemoryJobStore(clock=clock)
    queue = JobQueue(store, clock=clock)
    await queue.enqueue("report.build", {"month": "2031-02"})
    for n in range(3):
        await queue.enqueue("report.buld", {"month": f"2031-0{n + 1}"}, delay=600)
    now = clock()
    await store.put_presence(
        WorkerPresence(
            worker_id="worker-7f3a",
            host="ip-10-0-3-17",
            pid=4242,
            version="0.3.0",
            queues=("default",),
            names=("report.build",),
            concurrency=4,
            running=1,
            started_at=utc(now - 600),
            heartbeat_at=utc(now - 3),
            expires_at=utc(now - 3 + PRESENCE_TTL),
            last_claims={"default": utc(now - 12)},
        )
    )
    page = overview(store, clock)
    assert attention(page) == ["report.buld: 3 waiting in queue default, no worker serves it"]
    default = row(page, "default")
    assert '<td class="num workers">1</td>' in default
    assert '<td class="last-claim">12s ago</td>' in default

    clock.advance(PRESENCE_TTL)  # the worker stopped writing: gone, and the queue unserved
    later = attention(overview(store, clock))
    assert later[0].startswith("1 job waits and no worker serves queue default")


async def test_a_queue_whose_work_moves_asks_for_nothing() -> None:
    clock = FakeClock()
    store = MemoryJobStore(clock=clock)
    await JobQueue(store, clock=clock).enqueue("report.build", delay=60)
    page = overview(store, clock)
    assert attention(page) == [] and 'id="attention"' not in page
    assert '<td class="num workers">0</td>' in row(page, "default")  # nothing waits yet
