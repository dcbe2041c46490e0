"""A worker's presence record: written at start, kept while it runs, ended when it stops.

On the memory store with a fake clock at a realistic reading; the interval between
writes is shortened on the worker's own keeper so the tests need not wait 30 s. A store
that refuses the writes costs the worker nothing but one warning per outage.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable

import pytest

import sqsjobs
from sqsjobs import JobContext, JobQueue, JobStoreError, JobWorker, MemoryJobStore
from sqsjobs.core.presence import PRESENCE_INTERVAL, PRESENCE_TTL, WorkerPresence
from sqsjobs.core.times import utc
from sqsjobs.observe.log import Event

from .conftest import Env

QUICK = 0.02  # seconds between writes in these tests (30 s in a worker)


async def until(condition: Callable[[], object], what: str, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


async def listed(env: Env) -> list[WorkerPresence]:
    return await env.store.presences(env.clock())


async def listed_when(
    env: Env, condition: Callable[[list[WorkerPresence]], bool], what: str
) -> list[WorkerPresence]:
    """The records listed once ``condition`` holds of them (the worker writes in a task)."""
    for _ in range(1000):
        found = await listed(env)
        if condition(found):
            return found
        await asyncio.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


async def test_a_worker_writes_its_record_at_start_and_ends_it_at_stop(env: Env) -> None:
    handlers = {"report.build": lambda ctx: None, "invoice.send": lambda ctx: None}
    worker = JobWorker(env.queue, handlers, queues=["default"], concurrency=3)
    worker.start()
    found = await listed_when(env, bool, "the first write")
    started = utc(env.clock())
    assert found == [
        WorkerPresence(
            worker_id=worker.worker_id,
            host=socket.gethostname(),
            pid=os.getpid(),
            version=sqsjobs.__version__,
            queues=("default",),
            names=("invoice.send", "report.build"),
            concurrency=3,
            running=0,
            started_at=started,
            heartbeat_at=started,
            expires_at=utc(env.clock() + PRESENCE_TTL),
        )
    ]
    assert PRESENCE_INTERVAL == 30.0 and PRESENCE_TTL == 90.0
    await worker.stop()
    assert await listed(env) == []


async def test_claims_and_running_jobs_go_out_with_the_next_write(env: Env) -> None:
    release = asyncio.Event()

    async def build(ctx: JobContext) -> None:
        await release.wait()

    worker = JobWorker(env.queue, {"report.build": build}, concurrency=2)
    worker._presence.interval = QUICK
    worker.start()
    await until(lambda: worker._presence.due(env.clock()) is False, "the first write")
    claimed_at = env.clock()
    await env.queue.enqueue("report.build", {"month": "2031-02"})
    await until(lambda: worker.state.in_flight == 1, "the claim")
    env.clock.advance(7.25)  # the next write is later than the claim, on the same clock
    found = await listed_when(env, lambda found: found[0].running == 1, "a write after it")
    (record,) = found
    assert record.last_claims == {"default": utc(claimed_at)}
    assert record.heartbeat_at == utc(claimed_at + 7.25)
    assert record.started_at < record.heartbeat_at
    release.set()
    await worker.stop()
    assert await listed(env) == []


class Refusing(MemoryJobStore):
    """A store whose presence writes fail while ``down`` is set."""

    down = True
    tries = 0

    async def put_presence(self, presence: WorkerPresence) -> None:
        self.tries += 1
        if self.down:
            raise JobStoreError(
                "PutItem", "AccessDeniedException", "not authorized", retryable=False
            )
        await super().put_presence(presence)


async def test_a_refused_write_warns_once_per_outage_and_jobs_run_on(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    store = Refusing(clock=env.clock)
    queue = JobQueue(store, clock=env.clock)
    done: list[str] = []
    worker = JobWorker(queue, {"mail.send": lambda ctx: done.append(ctx.job.id)})
    worker._presence.interval = QUICK
    caplog.set_level(logging.DEBUG, logger="sqsjobs")
    worker.start()
    job = (await queue.enqueue("mail.send", {"to": "zoë@example.com"})).job
    await until(lambda: done == [job.id] and store.tries >= 3, "the job and three tries")
    store.down = False
    await until(lambda: any("written again" in r.message for r in caplog.records), "recovery")
    assert [p.worker_id for p in await store.presences(env.clock())] == [worker.worker_id]
    await worker.stop()
    presence = [r for r in caplog.records if getattr(r, "event", None) == Event.PRESENCE]
    warnings = [r for r in presence if r.levelno == logging.WARNING]
    assert len(warnings) == 1, [r.message for r in presence]
    assert "AccessDeniedException" in warnings[0].message and "jobs run on" in warnings[0].message
    assert all(r.levelno == logging.DEBUG for r in presence[1:-1])
    assert presence[-1].levelno == logging.INFO
    assert (await store.get(job.id, env.clock())).status == "completed"  # type: ignore[union-attr]


async def test_a_store_without_presence_records_is_left_alone(env: Env) -> None:
    """A custom store that keeps no presence records: the worker runs as before."""

    class Plain:
        def __init__(self, inner: MemoryJobStore) -> None:
            self._inner = inner

        def __getattr__(self, name: str) -> object:
            if "presence" in name:
                raise AttributeError(name)
            return getattr(self._inner, name)

    store = Plain(env.store)
    queue = JobQueue(store, clock=env.clock)  # type: ignore[arg-type]
    done: list[str] = []
    worker = JobWorker(queue, {"mail.send": lambda ctx: done.append(ctx.job.id)})
    worker.start()
    await queue.enqueue("mail.send")
    await until(lambda: len(done) == 1, "the job")
    await worker.stop()
    assert await env.store.presences(env.clock()) == []
