"""``wait`` over ``SqsJobStore`` on the emulator: the same records, errors and reads as on
the memory store (``tests/test_wait.py``), each read one consistent ``GetItem``.

The reads are counted by the emulator, on a fake monotonic clock that only the wait's
own pauses move; the tests with a worker run in real time and end within a tenth of a
second or so of the job ending.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sqsjobs import (
    JobConfigError,
    JobContext,
    JobFatalError,
    JobQueue,
    JobStatus,
    JobWorker,
    SyncJobQueue,
)
from sqsjobs.aws import SqsJobStore
from sqsjobs.producer.waiting import Pacing

from ..test_queue import call
from .emulator import COUNTER

Queue = JobQueue | SyncJobQueue


class FakeTime:
    """A monotonic clock that moves only by the pauses a wait sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    async def async_sleep(self, seconds: float) -> None:
        self.sleep(seconds)

    def pacing(self) -> Pacing:
        return Pacing(lambda: self.now, self.sleep, self.async_sleep)


def get_items() -> int:
    return COUNTER.counts().requests[("dynamodb", "GetItem")]


async def build(ctx: JobContext) -> dict[str, int]:
    return {"pages": 12}


async def refuse(ctx: JobContext) -> None:
    raise JobFatalError("the month is closed")


@pytest.fixture(params=[JobQueue, SyncJobQueue], ids=["async", "sync"])
def queue(request: pytest.FixtureRequest, store: SqsJobStore) -> Queue:
    cls: type[Queue] = request.param
    return cls(store)


async def test_wait_returns_the_completed_record_with_its_result(store: SqsJobStore) -> None:
    queue = JobQueue(store)
    job = (await queue.enqueue("report.build", {"month": "2026-11"})).job
    waiter = asyncio.create_task(queue.wait(job.id, timeout=30))
    await asyncio.sleep(0)
    assert await JobWorker(queue, {"report.build": build}).run_once()
    record = await waiter
    assert (record.id, record.status, record.result) == (job.id, JobStatus.COMPLETED, {"pages": 12})


async def test_wait_returns_the_dead_record(store: SqsJobStore) -> None:
    queue = JobQueue(store)
    job = (await queue.enqueue("report.build")).job
    waiter = asyncio.create_task(queue.wait(job.id, timeout=30))
    assert await JobWorker(queue, {"report.build": refuse}).run_once()
    record = await waiter
    assert (record.status, record.last_error) == (
        JobStatus.DEAD,
        "JobFatalError: the month is closed",
    )


async def test_a_blocking_wait_in_a_thread_sees_an_asyncio_worker_complete_the_job(
    store: SqsJobStore,
) -> None:
    queue = JobQueue(store)
    job = (await queue.enqueue("report.build")).job
    waiter = asyncio.create_task(asyncio.to_thread(SyncJobQueue(store).wait, job.id, timeout=30))
    assert await JobWorker(queue, {"report.build": build}).run_once()
    record = await waiter
    assert (record.status, record.result) == (JobStatus.COMPLETED, {"pages": 12})


async def test_a_cancelled_job_is_returned_by_one_get_item(queue: Queue) -> None:
    job = (await call(queue.enqueue("report.build"))).job
    assert await call(queue.cancel(job.id))
    before = get_items()
    record = await call(queue.wait(job.id, timeout=30))
    assert (record.id, record.status) == (job.id, JobStatus.CANCELLED)
    assert get_items() - before == 1


async def test_a_job_never_run_times_out_after_the_schedules_reads(queue: Queue) -> None:
    fake = FakeTime()
    queue._pacing = fake.pacing()
    job = (await call(queue.enqueue("report.build"))).job
    before = get_items()
    with pytest.raises(TimeoutError, match=r"is still queued after waiting 10 s"):
        await call(queue.wait(job.id, timeout=10))
    # Reads at 0, 0.1, 0.3, 0.7, then 1.5 to 8.5 s once a second, and at 10 s.
    assert get_items() - before == 13
    assert fake.now == pytest.approx(10.0)


@pytest.mark.parametrize("timeout", [0, -2.5, float("nan")])
async def test_a_bad_timeout_is_refused_before_any_read(queue: Queue, timeout: Any) -> None:
    before = get_items()
    with pytest.raises(JobConfigError, match="wait\\(\\) timeout"):
        await call(queue.wait("anything", timeout=timeout))
    assert get_items() == before


async def test_an_unknown_id_is_refused_after_one_get_item(queue: Queue) -> None:
    before = get_items()
    with pytest.raises(JobConfigError, match="No job 'f00' to wait for") as caught:
        await call(queue.wait("f00", timeout=30))
    assert caught.value.code == "invalid_option"
    assert get_items() - before == 1
