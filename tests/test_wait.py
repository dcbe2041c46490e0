"""``wait``: a job's record once it has ended, on every producer face (SPEC section 7).

The schedule of reads is the cost rule (``sqsjobs.producer.waiting``): at once, then
after 0.1, 0.2, 0.4 and 0.8 s, then one a second, the last stretched to the deadline.
It is asserted exactly, as the instants of the store's ``get`` calls on a fake
monotonic clock that only the wait's own pauses (and a slow read, where a test says so)
move: no real sleeping, no timed assertion. The tests that run a worker use real time,
and end within a tenth of a second or so of the job ending.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import math
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from sqsjobs import (
    Job,
    JobConfigError,
    JobContext,
    JobFatalError,
    JobQueue,
    JobStatus,
    JobWorker,
    MemoryJobStore,
    SyncJobQueue,
)
from sqsjobs.producer import waiting
from sqsjobs.producer.waiting import Pacing, reads

from .support.clock import FakeClock
from .test_queue import call

Queue = JobQueue | SyncJobQueue

# When a wait reads a job that never ends, reads taking no time (the module's docstring).
FIVE_SECONDS = [0.0, 0.1, 0.3, 0.7, 1.5, 2.5, 3.5, 5.0]


class FakeTime:
    """A monotonic clock moved by the pauses a wait sleeps, and by a read that takes time.

    ``at`` runs an action once the clock reaches its instant (a job ending mid-wait).
    """

    def __init__(self, read_takes: float = 0.0) -> None:
        self.now = 0.0
        self.pauses: list[float] = []
        self.read_takes = read_takes
        self._actions: list[tuple[float, Callable[[], object]]] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.pauses.append(seconds)
        self.now += seconds
        due = [action for at, action in self._actions if at <= self.now]
        self._actions = [(at, action) for at, action in self._actions if at > self.now]
        for action in due:
            action()

    async def async_sleep(self, seconds: float) -> None:
        self.sleep(seconds)

    def at(self, instant: float, action: Callable[[], object]) -> None:
        self._actions.append((instant, action))

    def pacing(self) -> Pacing:
        return Pacing(self.monotonic, self.sleep, self.async_sleep)


class _CountingView:
    """A store's blocking face whose ``get`` is counted; the rest passes through."""

    def __init__(self, view: Any, count: Callable[[], None]) -> None:
        self._view = view
        self._count = count

    def get(self, job_id: str, now: float) -> Job | None:
        self._count()
        return self._view.get(job_id, now)  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._view, name)


class CountingStore(MemoryJobStore):
    """A memory store that notes the fake monotonic instant of every ``get``, on both faces."""

    def __init__(self, clock: FakeClock, fake: FakeTime) -> None:
        super().__init__(clock=clock)
        self.reads: list[float] = []
        self._fake = fake
        self.sync = _CountingView(self.sync, self._note)  # type: ignore[assignment]

    def _note(self) -> None:
        self.reads.append(self._fake.now)
        self._fake.now += self._fake.read_takes

    async def get(self, job_id: str, now: float) -> Job | None:
        self._note()
        return await super().get(job_id, now)


@pytest.fixture
def fake() -> FakeTime:
    return FakeTime()


@pytest.fixture
def store(clock: FakeClock, fake: FakeTime) -> CountingStore:
    return CountingStore(clock, fake)


@pytest.fixture(params=[JobQueue, SyncJobQueue], ids=["async", "sync"])
def queue(
    request: pytest.FixtureRequest, store: CountingStore, clock: FakeClock, fake: FakeTime
) -> Queue:
    cls: type[Queue] = request.param
    made = cls(store, clock=clock)
    made._pacing = fake.pacing()  # the wait's clock and sleeps: the fake ones
    return made


async def enqueued(queue: Queue, **options: Any) -> Job:
    result = await call(queue.enqueue("report.build", {"month": "2026-11"}, **options))
    return result.job  # type: ignore[no-any-return]


def schedule(timeout: float) -> list[float]:
    """The reads of a wait for a job that never ends, reads taking no time, from ``reads``."""
    now = 0.0
    times: list[float] = []
    queued = Job.model_construct(status=JobStatus.QUEUED)
    steps = reads("j", timeout, lambda: now)
    pause = next(steps)
    while True:
        now += pause
        times.append(now)
        try:
            pause = steps.send(queued)
        except TimeoutError:
            return times


# -- the schedule, the cost rule ---------------------------------------------------------


@pytest.mark.parametrize(
    ("timeout", "expected"),
    [
        (0.05, [0.0, 0.05]),
        (0.25, [0.0, 0.1, 0.25]),
        (1.0, [0.0, 0.1, 0.3, 1.0]),
        (2.0, [0.0, 0.1, 0.3, 0.7, 2.0]),
        (5.0, FIVE_SECONDS),
        (10.0, [0.0, 0.1, 0.3, 0.7, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 10.0]),
    ],
)
def test_reads_back_off_then_come_once_a_second_the_last_at_the_deadline(
    timeout: float, expected: list[float]
) -> None:
    assert schedule(timeout) == pytest.approx(expected)


@pytest.mark.parametrize("timeout", [3.0, 5.0, 10.0, 30.0, 61.0, 3600.0])
def test_after_the_first_second_reads_are_a_second_apart_at_least(timeout: float) -> None:
    times = schedule(timeout)
    assert len(times) == math.floor(timeout + 3.5) <= timeout + 5
    assert times[:5] == pytest.approx([0.0, 0.1, 0.3, 0.7, 1.5])
    after_the_first_second = [b - a for a, b in itertools.pairwise(times[4:])]
    assert min(after_the_first_second) >= 1.0 - 1e-9
    assert times[-1] == pytest.approx(timeout)


def test_the_pauses_are_one_sequence_for_every_face() -> None:
    pauses = waiting.pauses()
    assert [next(pauses) for _ in range(7)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]


async def test_a_wait_reads_the_store_on_that_schedule(
    queue: Queue, store: CountingStore, fake: FakeTime
) -> None:
    job = await enqueued(queue)
    with pytest.raises(TimeoutError):
        await call(queue.wait(job.id, timeout=5))
    assert store.reads == pytest.approx(FIVE_SECONDS)
    assert fake.now == pytest.approx(5.0)  # in time: at the deadline, not a pause later


async def test_a_pause_counts_from_the_end_of_a_slow_read(
    queue: Queue, store: CountingStore, fake: FakeTime
) -> None:
    fake.read_takes = 0.3
    job = await enqueued(queue)
    with pytest.raises(TimeoutError):
        await call(queue.wait(job.id, timeout=5))
    # Reads end at 0.3, 0.7, 1.2, 1.9, 3.0, 4.3 (then 1.7 s are left: the last pause
    # stretches to the deadline), so a slow store is read less often, never more.
    assert fake.pauses == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 0.7])
    assert store.reads == pytest.approx([0.0, 0.4, 0.9, 1.6, 2.7, 4.0, 5.0])


async def test_a_read_past_the_deadline_is_the_last(
    queue: Queue, store: CountingStore, fake: FakeTime
) -> None:
    fake.read_takes = 2.0
    job = await enqueued(queue)
    with pytest.raises(TimeoutError):
        await call(queue.wait(job.id, timeout=1))
    assert (store.reads, fake.pauses) == ([0.0], [])


# -- what a wait returns -----------------------------------------------------------------


@pytest.mark.parametrize("timeout", [5, 5.0, timedelta(seconds=5)])
async def test_a_job_that_ends_mid_wait_is_returned_at_the_next_read(
    queue: Queue, store: CountingStore, fake: FakeTime, clock: FakeClock, timeout: Any
) -> None:
    job = await enqueued(queue)
    fake.at(2.0, lambda: store.sync.cancel(job.id, clock()))
    record = await call(queue.wait(job.id, timeout=timeout))
    assert store.reads == pytest.approx([0.0, 0.1, 0.3, 0.7, 1.5, 2.5])
    assert record.status is JobStatus.CANCELLED
    assert record == await call(queue.get(job.id))


async def test_a_job_that_ends_before_the_deadline_is_returned_by_the_last_read(
    queue: Queue, store: CountingStore, fake: FakeTime, clock: FakeClock
) -> None:
    job = await enqueued(queue)
    fake.at(4.0, lambda: store.sync.cancel(job.id, clock()))  # after the read at 3.5
    record = await call(queue.wait(job.id, timeout=5))
    assert record.status is JobStatus.CANCELLED
    assert store.reads == pytest.approx(FIVE_SECONDS)


async def test_an_ended_job_is_returned_by_the_first_read(
    queue: Queue, store: CountingStore
) -> None:
    job = await enqueued(queue)
    assert await call(queue.cancel(job.id))
    record = await call(queue.wait(job.id, timeout=30))
    assert (record.id, record.status) == (job.id, JobStatus.CANCELLED)
    assert store.reads == [0.0]


async def test_the_timeout_names_the_job_its_status_and_the_timeout(queue: Queue) -> None:
    job = await enqueued(queue, delay=600)
    with pytest.raises(TimeoutError) as caught:
        await call(queue.wait(job.id, timeout=timedelta(seconds=2.5)))
    assert str(caught.value) == (
        f"Job {job.id!r} is still delayed after waiting 2.5 s: it did not end "
        "(completed, dead or cancelled) within the timeout"
    )
    assert type(caught.value) is TimeoutError  # the builtin, which asyncio's timeouts raise too


# -- what a wait refuses -----------------------------------------------------------------


@pytest.mark.parametrize(
    "timeout",
    [
        0,
        -1,
        0.0,
        math.nan,
        math.inf,
        -math.inf,
        True,
        "5",
        None,
        timedelta(0),
        timedelta(seconds=-1),
    ],
)
async def test_a_timeout_must_be_positive_finite_seconds_checked_before_any_read(
    queue: Queue, store: CountingStore, timeout: Any
) -> None:
    job = await enqueued(queue)
    with pytest.raises(JobConfigError) as caught:
        await call(queue.wait(job.id, timeout=timeout))
    assert caught.value.code == "invalid_option"
    assert str(caught.value) == (
        f"Invalid wait() timeout {timeout!r}: must be a finite number of seconds > 0 or a timedelta"
    )
    assert store.reads == []


async def test_an_unknown_id_is_refused_at_the_first_read(
    queue: Queue, store: CountingStore
) -> None:
    with pytest.raises(JobConfigError) as caught:
        await call(queue.wait("no-such-job", timeout=30))
    assert caught.value.code == "invalid_option"
    assert str(caught.value) == (
        "No job 'no-such-job' to wait for (unknown, or removed when its retention period "
        "ended): pass an id that enqueue returned"
    )
    assert store.reads == [0.0]


# -- tenant views ------------------------------------------------------------------------


@pytest.mark.parametrize("view_of", [JobQueue, SyncJobQueue], ids=["async", "sync"])
def test_a_views_wait_is_its_facades(view_of: type[Queue]) -> None:
    queue = view_of(MemoryJobStore())
    view = queue.for_tenant("acme")
    assert inspect.iscoroutinefunction(view.wait) is inspect.iscoroutinefunction(queue.wait)
    assert inspect.signature(view.wait) == inspect.signature(queue.wait)


async def test_a_view_waits_for_its_tenants_job(queue: Queue, store: CountingStore) -> None:
    acme = queue.for_tenant("acme")
    job = await enqueued(queue, tenant="acme")
    assert await call(queue.cancel(job.id))
    record = await call(acme.wait(job.id, timeout=5))
    assert (record.id, record.tenant, record.status) == (job.id, "acme", JobStatus.CANCELLED)


@pytest.mark.parametrize("tenant", ["globex", None])
async def test_a_view_refuses_another_tenants_job_as_unknown_and_hides_its_status(
    queue: Queue, store: CountingStore, tenant: str | None
) -> None:
    job = await enqueued(queue, tenant=tenant)  # queued: a wait through the façade times out
    with pytest.raises(JobConfigError) as caught:
        await call(queue.for_tenant("acme").wait(job.id, timeout=5))
    assert str(caught.value).startswith(f"No job {job.id!r} to wait for (unknown,")
    assert "queued" not in str(caught.value)
    assert store.reads == [0.0]


# -- with a worker, in real time ---------------------------------------------------------


async def build(ctx: JobContext) -> dict[str, int]:
    return {"pages": 12}


async def refuse(ctx: JobContext) -> None:
    raise JobFatalError("the month is closed")


async def test_wait_returns_the_completed_record_with_its_result() -> None:
    queue = JobQueue(MemoryJobStore())
    job = await enqueued(queue)
    waiter = asyncio.create_task(queue.wait(job.id, timeout=10))
    await asyncio.sleep(0)  # its first read sees the job queued
    assert await JobWorker(queue, {"report.build": build}).run_once()
    record = await waiter
    assert (record.id, record.status, record.result) == (job.id, JobStatus.COMPLETED, {"pages": 12})


async def test_wait_returns_the_dead_record_with_its_error() -> None:
    queue = JobQueue(MemoryJobStore())
    job = await enqueued(queue)
    waiter = asyncio.create_task(queue.wait(job.id, timeout=10))
    await asyncio.sleep(0)
    assert await JobWorker(queue, {"report.build": refuse}).run_once()
    record = await waiter
    assert record.status is JobStatus.DEAD
    assert record.last_error == "JobFatalError: the month is closed"


async def test_a_blocking_wait_in_a_thread_sees_an_asyncio_worker_complete_the_job() -> None:
    store = MemoryJobStore()
    queue = JobQueue(store)
    job = await enqueued(queue)
    waiter = asyncio.create_task(asyncio.to_thread(SyncJobQueue(store).wait, job.id, timeout=10))
    assert await JobWorker(queue, {"report.build": build}).run_once()
    record = await waiter
    assert (record.status, record.result) == (JobStatus.COMPLETED, {"pages": 12})


async def test_a_real_wait_for_a_job_never_run_times_out() -> None:
    queue = JobQueue(MemoryJobStore())
    job = await enqueued(queue)
    with pytest.raises(TimeoutError, match=r"is still queued after waiting 0\.2 s"):
        await queue.wait(job.id, timeout=0.2)
    with pytest.raises(TimeoutError, match=r"is still queued after waiting 0\.2 s"):
        SyncJobQueue(queue.store).wait(job.id, timeout=0.2)
