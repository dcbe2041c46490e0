"""The request budget, counted by the emulator itself (counts, never times; SPEC §3).

Happy path: one DynamoDB write at enqueue (a conditional ``PutItem``, which on-demand
capacity bills like one item of a batch write), one at claim, one at complete, no reads;
SQS sends, receives and deletes batched so that requests per job approach 0.3. What the
writes bill is asserted too, as write request units computed from the item images the
emulator holds before and after each write (``sqsjobs.testing.meter``): 6 per small job,
3 on the table and 3 on the list index (its entry put, then moved when the job ends).
"""

from __future__ import annotations

import asyncio
import time

import pytest

from sqsjobs import EnqueueRequest, Job, JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.store import background
from sqsjobs.testing.meter import Write, totals

from .conftest import PAUSE_READS
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


@pytest.mark.usefixtures("one_pause_read")
async def test_a_hundred_jobs_bill_six_write_units_each_three_on_the_table(
    store: SqsJobStore,
) -> None:
    # The meter reads every written item before and after the write, which slows the
    # emulator and so changes how SQS requests batch: they are counted unmetered below.
    with METER.record() as metered:
        completed = await drain(store)
    assert len(set(completed)) == JOBS
    ours = [record for record in metered if record.table == store.table_name]
    # The worker's presence record (docs/explanation/aws-store.md): written at its start (and every
    # 30 s), ended at its stop, 2 WRU each, item and index entry; the jobs are the rest.
    presence = [r for r in ours if isinstance(r, Write) and key_of(r).startswith("worker#")]
    assert [w.action for w in presence][:1] + [w.action for w in presence][-1:] == [
        "PutItem",
        "UpdateItem",
    ]
    assert totals(presence) == (2 * len(presence), 0.0)
    ours = [record for record in ours if record not in presence]
    # The paused queues, read once: one eventually consistent GetItem of a small item.
    pauses = [r for r in ours if not isinstance(r, Write)]
    assert totals(pauses) == (0.0, 0.5)
    ours = [record for record in ours if record not in pauses]
    writes = [record for record in ours if isinstance(record, Write)]
    assert totals(ours) == (6 * JOBS, 0.0)
    on_table = sum(c.units for w in writes for c in w.charges if c.index_name is None)
    on_index = sum(c.units for w in writes for c in w.charges if c.index_name == "by_queue")
    assert (on_table, on_index) == (3 * JOBS, 3 * JOBS)


def key_of(write: Write) -> str:
    image = write.after or write.before
    assert image is not None
    return str(image["pk"]["S"])


async def claim_all(store: SqsJobStore) -> list[str]:
    """Enqueue ``JOBS`` small jobs in one batch, then claim ten at a time and complete
    each claim's ten together, as a busy worker at concurrency 10 does, step by step."""
    queue = JobQueue(store)
    await queue.enqueue_many(
        [EnqueueRequest("noop", {"n": n, "note": "Grüße"}) for n in range(JOBS)]
    )
    completed: list[str] = []
    while len(completed) < JOBS:
        claimed = await store.claim("default", "worker-1", time.time(), limit=10)
        done = await asyncio.gather(
            *(store.complete(j.id, j.lease_token or "", time.time(), j.attempts) for j in claimed)
        )
        assert all(done)
        completed += [job.id for job in claimed]
    await store.aclose()  # sends the last batched deletes
    return completed


@pytest.mark.usefixtures("one_pause_read")
async def test_a_hundred_jobs_cost_three_writes_each_and_three_tenths_of_an_sqs_request(
    aws_endpoint: str, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted exactly: every count is fixed by the steps, whatever the machine's speed.

    Completions share a ``DeleteMessageBatch`` when ten finish within its window; a window
    that outlasts the run leaves only full batches. The store has no priority lane, whose
    reads follow quiet periods of real time (``store.lanes``): what a busy worker with a
    lane costs is measured by ``bench/request_costs.py`` (0.32 requests per job).
    """
    monkeypatch.setattr(background, "DELETE_WINDOW", 120.0)
    store = SqsJobStore.create(prefix, priority_bands=(), endpoint_url=aws_endpoint)
    before = COUNTER.counts()
    completed = await claim_all(store)
    spent = COUNTER.counts() - before

    assert sorted(completed) == sorted(set(completed)) and len(completed) == JOBS
    # enqueue_many's item writes are conditional puts, one per job, never batch writes.
    assert dict(spent.requests) == {
        ("dynamodb", "PutItem"): JOBS,
        ("dynamodb", "UpdateItem"): 2 * JOBS,  # claim and complete
        ("sqs", "SendMessageBatch"): JOBS // 10,
        ("sqs", "ReceiveMessage"): JOBS // 10,
        ("sqs", "DeleteMessageBatch"): JOBS // 10,
        **PAUSE_READS,
    }
    assert spent.dynamodb_reads == 1
    assert spent.service("sqs") / JOBS == 0.3
