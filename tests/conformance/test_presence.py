"""Presence records: what each worker writes of itself, listed while alive, gone once run out.

Every store keeps them (``PresenceStore``) and hands them back as written; a record
counts until its ``expires_at`` whatever the store has deleted yet (the SQS store's
table deletes by TTL, days late), and ending one makes it gone at once. They are not
jobs: no listing, count or reconciler pass sees them. Times come from the harness's
clock, a reading with digits below the microsecond like ``time.time()``'s.
"""

from __future__ import annotations

import asyncio
import string
import threading
from typing import Any

from sqsjobs import JobFilter, JobStatus
from sqsjobs.core.presence import PRESENCE_TTL, WorkerPresence
from sqsjobs.core.times import utc
from sqsjobs.store import PresenceStore, StatsStore

from .capabilities import ReconcileStore
from .harness import BOTH_FACES, Harness
from .support import put

pytestmark = BOTH_FACES


def presence(worker_id: str, now: float, **fields: Any) -> WorkerPresence:
    """A record as a worker writes it at ``now``."""
    values: dict[str, Any] = {
        "worker_id": worker_id,
        "host": "ip-10-0-3-17.eu-west-1.compute.internal",
        "pid": 4242,
        "version": "0.3.0",
        "queues": ("default", "other"),
        "names": ("invoice.send", "report.build"),
        "concurrency": 8,
        "running": 0,
        "started_at": utc(now),
        "heartbeat_at": utc(now),
        "expires_at": utc(now + PRESENCE_TTL),
    }
    return WorkerPresence(**(values | fields))


def store_of(harness: Harness) -> PresenceStore:
    store = harness.store
    assert isinstance(store, PresenceStore)
    return store


async def test_a_record_is_listed_as_written_until_it_runs_out(harness: Harness) -> None:
    store, now = store_of(harness), harness.now()
    written = presence(
        "worker-7f3a9c",
        now,
        running=3,
        last_claims={"default": utc(now - 4.25), "other": utc(now - 61.5)},
    )
    await store.put_presence(written)
    assert await store.presences(now) == [written]
    assert written.last_claim_at == utc(now - 4.25)
    # It counts until it runs out, whether or not the store has removed it yet.
    assert await store.presences(now + PRESENCE_TTL - 1) == [written]
    assert await store.presences(now + PRESENCE_TTL + 1) == []


async def test_each_write_replaces_the_last_and_keeps_it_alive(harness: Harness) -> None:
    store, now = store_of(harness), harness.now()
    await store.put_presence(presence("worker-a", now))
    later = now + 30.000_000_7
    again = presence(
        "worker-a",
        later,
        started_at=utc(now),
        running=5,
        last_claims={"default": utc(later - 0.5)},
    )
    await store.put_presence(again)
    assert await store.presences(later) == [again]
    assert await store.presences(now + PRESENCE_TTL + 1) == [again]  # the first ran out here


async def test_several_workers_are_listed_each_once_by_id(harness: Harness) -> None:
    store, now = store_of(harness), harness.now()
    ids = ["worker-c", "lambda-0b1e", "worker-a"]
    for n, worker_id in enumerate(ids):
        await store.put_presence(presence(worker_id, now, queues=("default",), running=n))
    listed = await store.presences(now)
    assert [p.worker_id for p in listed] == sorted(ids)
    assert {p.worker_id: p.running for p in listed} == {
        "worker-c": 0,
        "lambda-0b1e": 1,
        "worker-a": 2,
    }


async def test_a_clean_stop_makes_the_record_gone_at_once(harness: Harness) -> None:
    store, now = store_of(harness), harness.now()
    await store.put_presence(presence("worker-a", now))
    await store.put_presence(presence("worker-b", now))
    await store.end_presence("worker-a", now + 12.5)
    assert [p.worker_id for p in await store.presences(now + 12.5)] == ["worker-b"]
    assert [p.worker_id for p in await store.presences(now + 13)] == ["worker-b"]
    # Ending a record that is gone, or that never was, changes nothing and raises nothing.
    await store.end_presence("worker-a", now + 14)
    await store.end_presence("worker-never", now + 14)
    assert [p.worker_id for p in await store.presences(now + 14)] == ["worker-b"]


async def test_a_worker_on_another_event_loop_is_listed_beside_this_one(
    harness: Harness,
) -> None:
    """Workers run on loops of their own (a thread's ``asyncio.run``): the store serves
    each loop in turn, and lists every worker's record whichever loop wrote it."""
    store, now = store_of(harness), harness.now()
    await store.put_presence(presence("worker-here", now))
    done = threading.Event()

    async def elsewhere() -> None:
        await store.put_presence(presence("worker-there", now, queues=("other",)))
        done.set()

    await asyncio.to_thread(asyncio.run, elsewhere())
    assert done.is_set()
    listed = await store.presences(now)
    assert [(p.worker_id, p.queues) for p in listed] == [
        ("worker-here", ("default", "other")),
        ("worker-there", ("other",)),
    ]
    await asyncio.to_thread(asyncio.run, store.end_presence("worker-there", now + 1))
    assert [p.worker_id for p in await store.presences(now + 1)] == ["worker-here"]


async def test_a_long_list_of_job_names_comes_back_whole(harness: Harness) -> None:
    """A registry of many handlers: the names are kept compressed (SQS store), read whole."""
    store, now = store_of(harness), harness.now()
    names = tuple(
        sorted(
            f"{team}.{verb}_{n}"
            for team in string.ascii_lowercase
            for verb in ("sync", "send")
            for n in range(4)
        )
    )
    written = presence("worker-big", now, names=names, pid=None, queues=())
    await store.put_presence(written)
    assert await store.presences(now) == [written]


async def test_presence_records_are_not_jobs(harness: Harness) -> None:
    store, now = store_of(harness), harness.now()
    await store.put_presence(presence("worker-a", now))
    job = await put(harness, "report.build")
    page = await harness.store.list(JobFilter(), 100, None, now)
    assert [found.id for found in page.jobs] == [job.id]
    counted = harness.store
    if isinstance(counted, StatsStore):
        (default, other) = await counted.stats(["default", "other"])
        assert default.counts[JobStatus.QUEUED] == 1 and sum(other.counts.values()) == 0
        assert (default.workers, other.workers) == (1, 1)
        assert default.waiting_names == {"report.build": 1}
        assert default.unserved_names == {}
    if isinstance(counted, ReconcileStore):
        report = await counted.reconcile()
        assert (report.resent, report.dead, report.copied) == (0, 0, 0)
