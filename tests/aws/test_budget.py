"""The request budget, counted by the emulator itself (counts, never times; SPEC §3).

Happy path: one DynamoDB write at enqueue (a conditional ``PutItem``, which on-demand
capacity bills like one item of a batch write), one at claim, one at complete, no reads;
SQS sends, receives and deletes batched so that requests per job approach 0.3. What the
writes bill is asserted too, as write request units computed from the item images the
emulator holds before and after each write (``sqsjobs.testing_meter``): 5 per small job,
3 on the table and 2 on the list index.
"""

from __future__ import annotations

import asyncio

import pytest

from sqsjobs import EnqueueRequest, Job, JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.store import background
from sqsjobs.testing_meter import Write, totals

from .emulator import COUNTER, METER

JOBS = 100


async def drain(store: SqsJobStore) -> list[str]:
    """Enqueue ``JOBS`` small jobs in one batch and run them at concurrency 10."""
    queue = JobQueue(store)
    completed: list[str] = []
    drained = asyncio.Event()

    async def noop(ctx: JobContext) -> int:
        return ctx.attempt

    def on_complete(job: Job) -> None:
        completed.append(job.id)
        if len(completed) == JOBS:
            drained.set()

    await queue.enqueue_many(
        [EnqueueRequest("noop", {"n": n, "note": "Grüße"}) for n in range(JOBS)]
    )
    # The jobs' queue only: the store's other queue would add its own idle receives.
    worker = JobWorker(
        queue, {"noop": noop}, queues=["default"], concurrency=10, on_complete=on_complete
    )
    worker.start()
    await asyncio.wait_for(drained.wait(), 60)
    await worker.stop()
    await store.aclose()  # sends the last batched deletes
    return completed


async def test_a_hundred_jobs_bill_five_write_units_each_three_on_the_table(
    store: SqsJobStore,
) -> None:
    # The meter reads every written item before and after the write, which slows the
    # emulator and so changes how SQS requests batch: they are counted unmetered below.
    with METER.record() as metered:
        completed = await drain(store)
    assert len(set(completed)) == JOBS
    ours = [record for record in metered if record.table == store.table_name]
    writes = [record for record in ours if isinstance(record, Write)]
    assert totals(ours) == (5 * JOBS, 0.0)
    on_table = sum(c.units for w in writes for c in w.charges if c.index_name is None)
    on_index = sum(c.units for w in writes for c in w.charges if c.index_name == "by_queue")
    assert (on_table, on_index) == (3 * JOBS, 2 * JOBS)


async def test_a_hundred_jobs_cost_three_writes_each_and_a_third_of_an_sqs_request(
    store: SqsJobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Completions share a DeleteMessageBatch when ten finish within its window; on a busy
    # machine fewer do, and the count would follow the machine's speed. A window that
    # outlasts the drain leaves only full batches of ten (and what the close sends), the
    # batching itself, whatever the load.
    monkeypatch.setattr(background, "DELETE_WINDOW", 120.0)
    before = COUNTER.counts()
    completed = await drain(store)
    spent = COUNTER.counts() - before

    assert len(set(completed)) == JOBS
    assert spent.dynamodb_writes == 3 * JOBS, spent.requests
    # enqueue_many's item writes are conditional puts, one per job, never batch writes.
    assert spent.requests[("dynamodb", "PutItem")] == JOBS, spent.requests
    assert spent.requests[("dynamodb", "BatchWriteItem")] == 0, spent.requests
    assert spent.dynamodb_reads == 0, spent.requests
    assert spent.service("sqs") / JOBS <= 0.35, spent.requests
    assert spent.requests[("sqs", "SendMessageBatch")] == JOBS // 10
    assert spent.requests[("sqs", "DeleteMessageBatch")] == JOBS // 10
