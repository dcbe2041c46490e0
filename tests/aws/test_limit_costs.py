"""What handler limits cost in requests, counted by the emulator (SPEC §6: handler limits).

A concurrency-limited start adds two DynamoDB writes to the three of every job: the
conditional ``PutItem`` that takes a slot and the ``UpdateItem`` that frees it (each
heartbeat adds one more). A rate-limited start adds one, the take: its slot is never
freed. Slot items carry no list-index attributes and a TTL, so they never show as jobs.
"""

from __future__ import annotations

import asyncio

import boto3
import pytest

from sqsjobs import EnqueueRequest, Job, JobContext, JobQueue, JobRegistry, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.slots import SLOT_TTL

from .emulator import COUNTER

JOBS = 20


async def run_all(store: SqsJobStore, registry: JobRegistry, name: str) -> None:
    queue = JobQueue(store)
    completed: list[str] = []
    drained = asyncio.Event()

    def on_complete(job: Job) -> None:
        completed.append(job.id)
        if len(completed) == JOBS:
            drained.set()

    await queue.enqueue_many([EnqueueRequest(name, {"n": n}) for n in range(JOBS)])
    # One run at a time: a take then always finds its first slot free (no two runs try
    # the same one at once), so the count is exact.
    worker = JobWorker(queue, registry, queues=["default"], concurrency=1, on_complete=on_complete)
    worker.start()
    await asyncio.wait_for(drained.wait(), 60)
    await worker.stop()


# The worker's presence record: put when it starts, ended (an update) when it stops.
PRESENCE = 2


async def noop(ctx: JobContext) -> None:
    return None


@pytest.mark.usefixtures("one_pause_read")
async def test_a_concurrency_limited_job_costs_a_take_and_a_free(store: SqsJobStore) -> None:
    registry = JobRegistry()
    registry.add("report.build", noop, concurrency=JOBS)  # never full: no deferrals
    before = COUNTER.counts()
    await run_all(store, registry, "report.build")
    spent = COUNTER.counts() - before
    assert spent.dynamodb_writes == 5 * JOBS + PRESENCE, spent.requests
    assert spent.requests[("dynamodb", "PutItem")] == 2 * JOBS + 1, spent.requests  # put + take
    assert spent.requests[("dynamodb", "UpdateItem")] == 3 * JOBS + 1, spent.requests
    assert spent.dynamodb_reads == 1, spent.requests  # the paused queues, read once


@pytest.mark.usefixtures("one_pause_read")
async def test_a_rate_limited_job_costs_one_take(store: SqsJobStore) -> None:
    registry = JobRegistry()
    # One slot held for a millisecond: free again by the next start (a claim away), so
    # every take succeeds at its first try. With several slots held, a take tries some
    # held ones first (random order): docs/explanation/benchmarks.md measures that.
    registry.add("mail.send", noop, rate=(1, 0.001))
    before = COUNTER.counts()
    await run_all(store, registry, "mail.send")
    spent = COUNTER.counts() - before
    assert spent.dynamodb_writes == 4 * JOBS + PRESENCE, spent.requests
    assert spent.dynamodb_reads == 1, spent.requests  # the paused queues, read once


async def test_slot_items_carry_a_ttl_and_no_index_attributes(
    store: SqsJobStore, aws_endpoint: str
) -> None:
    dynamodb = boto3.client("dynamodb", endpoint_url=aws_endpoint)
    now = 1_900_000_000.0
    taken = await store.take_slot("concurrency/report.build/acme", [3], "token-1", now + 30, now)
    assert taken.slot == 3
    item = dynamodb.get_item(
        TableName=store.table_name, Key={"pk": {"S": "limit#concurrency/report.build/acme#3"}}
    )["Item"]
    assert set(item) == {"pk", "holder", "lease_until", "expires_at"}
    assert float(item["expires_at"]["N"]) == now + 30 + SLOT_TTL
    assert (await JobQueue(store).list()).jobs == []
    stats = await store.stats(["default"])
    assert all(count == 0 for count in stats[0].counts.values())
    dynamodb.close()
