"""Handler limits and the tenant cap in workers, on the memory store with real short runs.

Overlap is measured from the instants each run started and ended, recorded by the
handler itself; the bounds asserted are counts (runs at once), never durations.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import pytest

from sqsjobs import (
    EnqueueRequest,
    JobConfigError,
    JobContext,
    JobQueue,
    JobRegistry,
    JobStatus,
    JobWorker,
    MemoryJobStore,
)
from sqsjobs.core.store import SlotTaken

RUN = 0.05  # seconds each run takes


class Runs:
    """Start and end instants of every run, by job id."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float, str, str | None]] = []
        self.started = 0
        self.two_started = asyncio.Event()

    async def run(self, ctx: JobContext) -> None:
        start = time.monotonic()
        self.started += 1
        if self.started >= 2:
            self.two_started.set()
        await asyncio.sleep(float(ctx.payload.get("seconds", RUN)))
        self.spans.append((start, time.monotonic(), ctx.job.id, ctx.job.tenant))

    def peak(self, tenant: str | None = None) -> int:
        """Most runs at once (of ``tenant``, when given)."""
        spans = [s for s in self.spans if tenant is None or s[3] == tenant]
        edges = sorted([(s[0], 1) for s in spans] + [(s[1], -1) for s in spans])
        most = running = 0
        for _, step in edges:
            running += step
            most = max(most, running)
        return most


async def until_done(queue: JobQueue, ids: list[str], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        jobs = [await queue.get(i) for i in ids]
        if all(j is not None and j.status is JobStatus.COMPLETED for j in jobs):
            return
        assert time.monotonic() < deadline, "the jobs did not all complete"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"concurrency": 0}, "Invalid concurrency 0: must be an int from 1 to 100"),
        ({"concurrency": True}, "Invalid concurrency True"),
        ({"rate": (0, 1.0)}, "Invalid rate count 0"),
        ({"rate": (5, 0)}, "Invalid rate per_seconds 0"),
        ({"rate": (5, float("nan"))}, "Invalid rate per_seconds nan"),
        ({"rate": 5}, "Invalid rate 5: must be a tuple (count, per_seconds)"),
        ({"per_tenant": "yes", "concurrency": 2}, "Invalid per_tenant 'yes'"),
        ({"per_tenant": True}, "per_tenant=True needs a limit"),
    ],
)
def test_limit_options_are_checked_at_the_decorator(options: dict[str, Any], says: str) -> None:
    with pytest.raises(JobConfigError) as refused:
        JobRegistry().handler("report.build", **options)
    assert refused.value.code == "invalid_option"
    assert says in str(refused.value)


def test_a_worker_refuses_a_tenant_cap_out_of_range() -> None:
    registry = JobRegistry()
    registry.add("x", lambda ctx: None)
    with pytest.raises(ValueError, match="tenant_concurrency must be an int >= 1, got 0"):
        JobWorker(JobQueue(MemoryJobStore()), registry, tenant_concurrency=0)


class NoSlots(MemoryJobStore):
    """A store without the slot operations (a custom store written before limits)."""

    take_slot = None  # type: ignore[assignment]


def test_a_worker_refuses_limited_handlers_on_a_store_without_slots() -> None:
    registry = JobRegistry()
    registry.add("report.build", lambda ctx: None, concurrency=2)
    with pytest.raises(JobConfigError, match="NoSlots has no limit slots"):
        JobWorker(JobQueue(NoSlots()), registry)  # type: ignore[arg-type]


async def test_two_workers_never_run_more_than_the_concurrency_limit() -> None:
    runs, registry = Runs(), JobRegistry()
    registry.add("report.build", runs.run, concurrency=2)
    queue = JobQueue(MemoryJobStore())
    ids = [(await queue.enqueue("report.build", {"n": n})).job.id for n in range(10)]
    async with JobWorker(queue, registry, concurrency=3), JobWorker(queue, registry, concurrency=3):
        await until_done(queue, ids)
    assert runs.peak() == 2
    assert {(await queue.get(i)).attempts for i in ids} == {1}  # type: ignore[union-attr]


async def test_per_tenant_limits_count_each_tenant_apart() -> None:
    runs, registry = Runs(), JobRegistry()
    registry.add("sync.crm", runs.run, concurrency=1, per_tenant=True)
    queue = JobQueue(MemoryJobStore())
    ids = [
        (await queue.enqueue("sync.crm", {"seconds": 0.2}, tenant=t)).job.id
        for t in ["acme", "globex", "acme", "globex"]
    ]
    async with JobWorker(queue, registry, concurrency=4):
        await until_done(queue, ids)
    assert (runs.peak("acme"), runs.peak("globex")) == (1, 1)
    assert runs.peak() == 2


async def test_a_slot_outlives_a_short_lease_while_its_run_heartbeats() -> None:
    runs, registry = Runs(), JobRegistry()
    registry.add("video.encode", runs.run, concurrency=1)
    queue = JobQueue(MemoryJobStore())
    ids = [
        (await queue.enqueue("video.encode", {"seconds": 1.0}, lease=0.3)).job.id for _ in range(2)
    ]
    async with JobWorker(queue, registry, concurrency=2):
        await until_done(queue, ids)
    assert runs.peak() == 1


class SlotsTaken(MemoryJobStore):
    """A memory store noting when each start took a slot, by the clock the run passed."""

    def __init__(self) -> None:
        super().__init__()
        self.takes: list[float] = []

    async def take_slot(
        self, key: str, order: Sequence[int], holder: str, until: float, now: float
    ) -> SlotTaken:
        taken = await super().take_slot(key, order, holder, until, now)
        if taken.slot is not None:
            self.takes.append(now)
        return taken


async def test_a_rate_limit_spaces_the_starts() -> None:
    """Judged at the slots, where the limit is enforced: a handler's own start can lag
    its slot by any time a loaded machine takes, which says nothing about the limit."""
    runs, registry = Runs(), JobRegistry()
    registry.add("mail.send", runs.run, rate=(3, 0.5))
    store = SlotsTaken()
    queue = JobQueue(store)
    ids = [(await queue.enqueue("mail.send", {"seconds": 0.01})).job.id for _ in range(7)]
    async with JobWorker(queue, registry, concurrency=7):
        await until_done(queue, ids)
    takes = sorted(store.takes)
    assert len(takes) == len(runs.spans) == 7
    assert max(sum(1 for s in takes if t <= s < t + 0.5) for t in takes) == 3


async def test_one_tenants_burst_leaves_room_for_another_tenant() -> None:
    """500 jobs of tenant A, then one of B: with 4 slots and a cap of 2 per tenant, B's job
    starts while A's two runs still hold their slots, not after A's whole burst."""
    a_running = asyncio.Event()
    release_a = asyncio.Event()
    started: list[str | None] = []

    async def rows(ctx: JobContext) -> None:
        started.append(ctx.job.tenant)
        if ctx.job.tenant == "tenant-a":
            if started.count("tenant-a") == 2:
                a_running.set()
            await release_a.wait()  # A's runs hold their slots until B has started

    queue = JobQueue(MemoryJobStore())
    burst = [EnqueueRequest("import.rows", {"rows": n}, tenant="tenant-a") for n in range(500)]
    await queue.enqueue_many(burst)
    async with JobWorker(queue, {"import.rows": rows}, concurrency=4, tenant_concurrency=2):
        await a_running.wait()
        b = (await queue.enqueue("import.rows", {"rows": 1}, tenant="tenant-b")).job
        await until_done(queue, [b.id])
        # B ran to its end while A's first two runs were still going, and A, at its cap,
        # had started no other.
        assert started == ["tenant-a", "tenant-a", "tenant-b"]
        release_a.set()
    done_b = await queue.get(b.id)
    assert done_b is not None and done_b.attempts == 1
