"""Open work and history apart: what the end of a job moves, and what reads then cost.

From record format 3 on, the write that ends a job moves its ``by_queue`` entry from
its queue's open partition to its terminal status's (``wire.index_keys``). Reads of open work
(stats' open counts, the reconciler, lists of waiting jobs) then cost what is open,
metered here beside 100 and 1,000 kept jobs; records that ended under format 2 are still
counted and listed.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import boto3
import pytest

from sqsjobs import EnqueueRequest, JobContext, JobFatalError, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.history import history_items, keep_history
from sqsjobs.testing.meter import Read

from .conftest import QUEUES, SKEW, all_ids
from .emulator import METER, unique_prefix


def index_keys(endpoint: str, table: str) -> dict[str, tuple[str, str]]:
    """Each job id's ``list_pk`` and ``phase``, read straight from the table."""
    client = boto3.client("dynamodb", endpoint_url=endpoint)
    try:
        items: list[dict[str, Any]] = []
        for page in client.get_paginator("scan").paginate(TableName=table):
            items += page["Items"]
    finally:
        client.close()
    return {
        i["id"]["S"]: (i["list_pk"]["S"], i["phase"]["S"])
        for i in items
        if i["pk"]["S"].startswith("job#")
    }


def shard(job_id: str) -> int:
    return zlib.crc32(job_id.encode()) % 4


async def poison(ctx: JobContext) -> None:
    raise JobFatalError("SMTPDataError: 554 message rejected")


async def test_each_end_moves_the_entry_to_its_status_and_a_retry_moves_it_back(
    store: SqsJobStore, aws_endpoint: str
) -> None:
    queue = JobQueue(store)
    done = (await queue.enqueue("invoice.send", {"n": 1}, tenant="acme")).job
    assert await JobWorker(queue, {"invoice.send": lambda ctx: None}).run_once()
    dead = (await queue.enqueue("invoice.fail", {"n": 2})).job
    assert await JobWorker(queue, {"invoice.fail": poison}).run_once()
    cancelled = (await queue.enqueue("invoice.send", {"n": 3}, delay=600)).job
    assert await queue.cancel(cancelled.id)
    waiting = (await queue.enqueue("invoice.send", {"n": 4}, queue="other")).job

    keys = index_keys(aws_endpoint, store.table_name)
    assert keys[done.id] == (f"default#{shard(done.id)}#completed", "completed")
    # Its DLQ copy confirmed, the dead job leaves the open partition too.
    assert keys[dead.id] == (f"default#{shard(dead.id)}#dead", "dead")
    assert keys[cancelled.id] == (f"default#{shard(cancelled.id)}#cancelled", "cancelled")
    assert keys[waiting.id] == (f"other#{shard(waiting.id)}", "open")

    assert await store.retry(dead.id, time.time())
    assert index_keys(aws_endpoint, store.table_name)[dead.id] == (
        f"default#{shard(dead.id)}",
        "open",
    )
    assert await all_ids(queue, status=JobStatus.QUEUED) == [dead.id, waiting.id]
    assert await all_ids(queue, status=JobStatus.COMPLETED) == [done.id]
    assert await all_ids(queue, status=JobStatus.CANCELLED) == [cancelled.id]
    assert await all_ids(queue, 2) == [done.id, dead.id, cancelled.id, waiting.id]


async def test_records_ended_under_format_2_are_counted_and_listed_beside_moved_ones(
    store: SqsJobStore, aws_endpoint: str
) -> None:
    two = SqsJobStore(
        table_name=store.table_name,
        queue_urls=store.queue_urls,
        endpoint_url=aws_endpoint,
        record_format=2,
    )
    try:
        before = (await JobQueue(two).enqueue("invoice.send", {"n": 1})).job
        assert await JobWorker(JobQueue(two), {"invoice.send": lambda ctx: None}).run_once()
        after = (await JobQueue(store).enqueue("invoice.send", {"n": 2})).job
        assert await JobWorker(JobQueue(store), {"invoice.send": lambda ctx: None}).run_once()
        keys = index_keys(aws_endpoint, store.table_name)
        assert keys[before.id] == (f"default#{shard(before.id)}", "completed")  # in place
        assert keys[after.id] == (f"default#{shard(after.id)}#completed", "completed")

        for reader in (store, two):
            [stats] = await reader.stats(["default"])
            assert stats.counts[JobStatus.COMPLETED] == 2
            assert await all_ids(JobQueue(reader)) == [before.id, after.id]
        # A format 2 deployment lists both under their status. From format 3 on, the one
        # that ended in place is listed unfiltered only, until its retention ends.
        assert await all_ids(JobQueue(two), status=JobStatus.COMPLETED) == [before.id, after.id]
        assert await all_ids(JobQueue(store), status=JobStatus.COMPLETED) == [after.id]
    finally:
        await two.aclose()


Measure = Callable[[SqsJobStore], Awaitable[Any]]
OPEN_JOBS = 10


async def metered(store: SqsJobStore, measure: Measure) -> tuple[float, Any]:
    """The read units ``measure`` bills on the store's table, and what it returned."""
    with METER.record() as records:
        found = await measure(store)
    reads = [r for r in records if isinstance(r, Read) and r.table == store.table_name]
    return sum(r.units for r in reads), found


@pytest.fixture
async def kept(aws_endpoint: str) -> AsyncIterator[dict[int, SqsJobStore]]:
    """Two tables, each with the same open work: 10 waiting jobs of three tenants, one
    whose message was lost and one whose runs kept dying (its message redriven to the
    DLQ); beside 100 and 1,000 jobs that ended over the day before."""
    stores: dict[int, SqsJobStore] = {}
    dynamodb = boto3.client("dynamodb", endpoint_url=aws_endpoint)
    sqs = boto3.client("sqs", endpoint_url=aws_endpoint)
    try:
        for count in (100, 1_000):
            store = SqsJobStore.create(
                unique_prefix(),
                queues=QUEUES,
                max_receive_count=1,
                endpoint_url=aws_endpoint,
                clock_skew=SKEW,
            )
            stores[count] = store
            history = history_items("default", count, ended_before=time.time() - 3_700, seed=7)
            keep_history(dynamodb, store.table_name, history)
            await dying(store)
        await asyncio.sleep(1.3)  # the dying job's lease is over
        for store in stores.values():  # ...and its second receive moves it to the DLQ
            assert await store.claim("default", "w", time.time(), wait=1) == []
            await waiting_work(store, sqs, aws_endpoint)
        yield stores
    finally:
        for store in stores.values():
            await store.aclose()
        dynamodb.close()
        sqs.close()


async def dying(store: SqsJobStore) -> None:
    queue = JobQueue(store)
    job = (await queue.enqueue("invoice.send", {"n": "dying"}, lease=1, max_attempts=5)).job
    [claimed] = await store.claim("default", "w", time.time())
    assert claimed.id == job.id  # ...and the process runs out of memory


async def waiting_work(store: SqsJobStore, sqs: Any, endpoint: str) -> None:
    queue = JobQueue(store)

    def earlier() -> float:
        return time.time() - 120

    past = SqsJobStore(  # two minutes ago, its producer died before the send reached SQS
        table_name=store.table_name,
        queue_urls=store.queue_urls,
        endpoint_url=endpoint,
        clock=earlier,
    )
    try:
        producer = JobQueue(past, clock=earlier)
        lost = (await producer.enqueue("invoice.send", {"n": "lost"}, tenant="acme")).job
    finally:
        await past.aclose()
    url = store.queue_urls["default"]
    [message] = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])  # lost
    assert lost.id in message["Body"]
    for n in range(OPEN_JOBS - 2):
        tenant = ("acme", "globex", "initech")[n % 3]
        await queue.enqueue("invoice.send", {"n": n, "note": "Grüße"}, tenant=tenant)


async def test_reads_cost_what_is_open_whatever_the_table_keeps(
    kept: dict[int, SqsJobStore],
) -> None:
    async def reconcile(store: SqsJobStore) -> Any:
        return await store.reconcile(grace=60.0, queues=["default"])

    async def waiting(store: SqsJobStore) -> Any:
        return await JobQueue(store).list(queue="default", status=JobStatus.QUEUED, limit=10)

    async def tenant(store: SqsJobStore) -> Any:
        return await JobQueue(store).for_tenant("acme").list(limit=10)

    async def stats(store: SqsJobStore) -> Any:
        return await store.stats(["default"])

    costs: dict[str, list[float]] = {}
    for name, measure in (
        ("stats", stats),
        ("queued", waiting),
        ("tenant", tenant),
        ("reconcile", reconcile),
    ):
        for store in kept.values():
            units, found = await metered(store, measure)
            costs.setdefault(name, []).append(units)
            check(name, found)
    for name, (small, large) in costs.items():
        assert large <= small * 1.3, (name, costs)
    assert costs["stats"][0] == costs["stats"][1]
    assert costs["queued"][0] == costs["queued"][1]


def check(name: str, found: Any) -> None:
    """What each read found, the same beside any history."""
    if name == "reconcile":  # the stranded jobs are found among the kept ones
        assert (found.resent, found.dead) == (1, 1)
    elif name == "queued":
        assert len(found.jobs) == OPEN_JOBS - 1
    elif name == "stats":
        [counts] = found
        assert counts.counts[JobStatus.QUEUED] == OPEN_JOBS - 1
        assert counts.counts[JobStatus.COMPLETED] == 0  # the history is older than the window


async def test_a_list_stops_at_its_budget_with_a_cursor_and_pages_on(store: SqsJobStore) -> None:
    """A small tenant's list beside a large one's 300 jobs: no call evaluates more than
    10 x ``limit`` entries (plus one per partition), and paging finds every job."""
    queue = JobQueue(store)
    small = [(await queue.enqueue("report.build", {"n": 0}, tenant="small")).job]
    for start in range(0, 300, 10):
        await queue.enqueue_many(
            [
                EnqueueRequest("report.build", {"n": n, "note": "Grüße"}, tenant="large")
                for n in range(start, start + 10)
            ]
        )
    small.append((await queue.enqueue("report.build", {"n": 301}, tenant="small")).job)
    partitions = 2 * 4 * 4  # two queues, four shards, open and three terminal statuses
    found: list[str] = []
    pages = 0
    cursor = None
    while True:
        with METER.record() as records:
            page = await queue.for_tenant("small").list(limit=5, cursor=cursor)
        pages += 1
        evaluated = sum(r.evaluated for r in records if isinstance(r, Read) and r.action == "Query")
        assert evaluated <= 10 * 5 + partitions
        found += [job.id for job in page.jobs]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert found == [job.id for job in small]
    assert pages > 1  # the first page stopped at its budget, short of the second job
