"""A claim cancelled mid-receive hides nothing: what SQS still hands its poll goes back.

SQS (like the emulator) keeps a ``ReceiveMessage`` long poll running after its client
gave up on it, and hands the messages that arrive meanwhile to that abandoned poll,
hidden from every other receive for the visibility timeout (30 s here). A stopping
worker cancels its long polls, so a job enqueued during the stop, or the one its drain
released, would wait half a minute for the next worker. The store lets the receive run
on and hands what it brings straight back; the worker's stop waits for that.

The stores here long-poll for up to ``POLL`` seconds, so an abandoned poll is still
waiting when the test's message arrives; a second store plays the next worker.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sqsjobs import Job, JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore

from .conftest import SKEW
from .emulator import COUNTER

POLL = 5.0
RECEIVES = ("sqs", "ReceiveMessage")
# What the next worker's claim may take to see a message handed back: moto wakes a
# waiting poll for a message made visible again within about a second. Hidden, it would
# take the visibility timeout, 30 s.
AT_ONCE = 3.0


@pytest.fixture
async def stores(aws_endpoint: str, prefix: str) -> AsyncIterator[tuple[SqsJobStore, SqsJobStore]]:
    """The stopping worker's store, and the next worker's on the same resources."""
    made = SqsJobStore.create(
        prefix, priority_bands=(), endpoint_url=aws_endpoint, clock_skew=SKEW, wait_time=POLL
    )
    following = next_store(made, aws_endpoint)
    try:
        yield made, following
    finally:
        await following.aclose()
        await made.aclose()


def next_store(made: SqsJobStore, endpoint: str, **kwargs: Any) -> SqsJobStore:
    return SqsJobStore(
        table_name=made.table_name,
        queue_urls=made.queue_urls,
        endpoint_url=endpoint,
        clock_skew=SKEW,
        wait_time=POLL,
        **kwargs,
    )


async def long_poll_waiting(receives_before: int) -> None:
    """Until a receive after ``receives_before`` reached the emulator and waits there."""
    await asyncio.to_thread(
        COUNTER.wait_until, lambda counts: counts.requests[RECEIVES] > receives_before, 10
    )
    await asyncio.sleep(0.2)  # arrived is not yet served: let the emulator start waiting


async def claimed_at_once(store: SqsJobStore) -> tuple[Job, float]:
    """The next worker's claim: the job, and how long it took to come."""
    started = time.monotonic()
    [job] = await store.claim("default", "next", time.time(), wait=AT_ONCE)
    return job, time.monotonic() - started


async def test_a_job_sent_to_a_cancelled_long_poll_goes_back_to_the_queue(
    stores: tuple[SqsJobStore, SqsJobStore],
) -> None:
    stopping, following = stores
    before = COUNTER.counts().requests[RECEIVES]
    polling = asyncio.ensure_future(stopping.claim("default", "stopping", time.time(), wait=POLL))
    await long_poll_waiting(before)
    polling.cancel()
    with pytest.raises(asyncio.CancelledError):
        await polling
    enqueued = (await JobQueue(stopping).enqueue("mail.send", {"to": "a@example.com"})).job
    job, took = await claimed_at_once(following)
    assert (job.id, job.attempts) == (enqueued.id, 1)
    assert took < AT_ONCE
    started = time.monotonic()
    await stopping.wait_cancelled_claims()  # the poll is over: nothing left to wait for
    assert time.monotonic() - started < 0.5


async def test_a_store_closed_while_a_cancelled_poll_waits_hands_back_what_arrives(
    stores: tuple[SqsJobStore, SqsJobStore],
) -> None:
    stopping, following = stores
    before = COUNTER.counts().requests[RECEIVES]
    polling = asyncio.ensure_future(stopping.claim("default", "stopping", time.time(), wait=POLL))
    await long_poll_waiting(before)
    polling.cancel()
    closing = asyncio.ensure_future(stopping.aclose())  # as a process about to exit does
    await asyncio.sleep(0.3)
    assert not closing.done()  # it waits for the poll SQS still runs
    enqueued = (await JobQueue(following).enqueue("mail.send", {"to": "b@example.com"})).job
    await asyncio.wait_for(closing, POLL)  # the poll got the job and ended: so did the close
    job, took = await claimed_at_once(following)
    assert (job.id, job.attempts) == (enqueued.id, 1)
    assert took < AT_ONCE
    assert polling.cancelled()


async def test_a_stopping_worker_hands_back_the_job_its_drain_released(
    stores: tuple[SqsJobStore, SqsJobStore],
) -> None:
    stopping, following = stores
    started = asyncio.Event()

    async def report(ctx: JobContext) -> None:
        started.set()
        await asyncio.sleep(120)

    enqueued = (await JobQueue(stopping).enqueue("report.build", {"month": "2026-11"})).job
    # Two slots, one job: the free slot keeps a long poll open while the job runs.
    worker = JobWorker(JobQueue(stopping), {"report.build": report}, concurrency=2)
    before = COUNTER.counts().requests[RECEIVES]
    worker.start()
    await asyncio.wait_for(started.wait(), 10)
    await long_poll_waiting(before + 1)  # the receive that brought the job, then the poll
    stop_began = time.monotonic()
    await worker.stop(grace=0.5)
    # The release made the message visible to the poll the stop cut short; the store took
    # it straight back, and the stop ended with that poll, not at its 5 s wait.
    assert time.monotonic() - stop_began < 0.5 + POLL - 1
    released = await JobQueue(stopping).get(enqueued.id)
    assert released is not None
    assert (released.status, released.attempts) == (JobStatus.QUEUED, 0)
    await asyncio.sleep(1.5)  # the next worker starts; a poll left waiting would have it
    job, took = await claimed_at_once(following)
    assert (job.id, job.attempts) == (enqueued.id, 1)
    assert took < AT_ONCE


async def test_an_idle_worker_stops_once_its_last_long_poll_ends(
    aws_endpoint: str, prefix: str
) -> None:
    wait = 2.0
    store = SqsJobStore.create(
        prefix, priority_bands=(), endpoint_url=aws_endpoint, clock_skew=SKEW, wait_time=wait
    )
    try:
        worker = JobWorker(JobQueue(store), {"mail.send": lambda ctx: None})
        before = COUNTER.counts().requests[RECEIVES]
        worker.start()
        await long_poll_waiting(before)
        polled = time.monotonic()
        stopped = asyncio.ensure_future(worker.stop())
        await asyncio.sleep(0.5)
        assert not stopped.done()  # the poll is still open at SQS: the stop waits it out
        await asyncio.wait_for(stopped, wait + 2)
        took = time.monotonic() - polled
        assert wait - 1 < took < wait + 1  # the poll's wait, no more
        assert not worker.state.running
    finally:
        await store.aclose()


async def test_a_fifo_group_is_not_held_by_a_cancelled_poll(aws_endpoint: str, prefix: str) -> None:
    """On a FIFO queue the hidden message would hold its whole group for those 30 s."""
    stopping = SqsJobStore.create(
        prefix, fifo=True, endpoint_url=aws_endpoint, clock_skew=SKEW, wait_time=POLL
    )
    following = next_store(stopping, aws_endpoint)
    try:
        before = COUNTER.counts().requests[RECEIVES]
        polling = asyncio.ensure_future(
            stopping.claim("default", "stopping", time.time(), wait=POLL)
        )
        await long_poll_waiting(before)
        polling.cancel()
        producer = JobQueue(following)
        head = (await producer.enqueue("ledger.post", {"n": 1}, group="account-7")).job
        await producer.enqueue("ledger.post", {"n": 2}, group="account-7")
        job, took = await claimed_at_once(following)
        assert (job.id, job.attempts) == (head.id, 1)
        assert took < AT_ONCE
    finally:
        await following.aclose()
        await stopping.aclose()
