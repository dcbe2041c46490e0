"""The request budget, counted by the emulator itself (counts, never times; SPEC §3).

Happy path: one DynamoDB write at enqueue (a conditional ``PutItem``, which on-demand
capacity bills like one item of a batch write), one at claim, one at complete, no reads;
SQS sends, receives and deletes batched so that requests per job approach 0.3.
"""

from __future__ import annotations

import asyncio

from sqsjobs import EnqueueRequest, Job, JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore

from .emulator import COUNTER

JOBS = 100


async def test_a_hundred_jobs_cost_three_writes_each_and_a_third_of_an_sqs_request(
    store: SqsJobStore,
) -> None:
    queue = JobQueue(store)
    completed: list[str] = []
    drained = asyncio.Event()

    async def noop(ctx: JobContext) -> int:
        return ctx.attempt

    def on_complete(job: Job) -> None:
        completed.append(job.id)
        if len(completed) == JOBS:
            drained.set()

    before = COUNTER.counts()
    await queue.enqueue_many([EnqueueRequest("noop", {"n": n}) for n in range(JOBS)])
    # The jobs' queue only: the store's other queue would add its own idle receives.
    worker = JobWorker(
        queue, {"noop": noop}, queues=["default"], concurrency=10, on_complete=on_complete
    )
    worker.start()
    await asyncio.wait_for(drained.wait(), 60)
    await worker.stop()
    await store.aclose()  # sends the last batched deletes
    spent = COUNTER.counts() - before

    assert len(set(completed)) == JOBS
    assert spent.dynamodb_writes == 3 * JOBS, spent.requests
    # enqueue_many's item writes are conditional puts, one per job, never batch writes.
    assert spent.requests[("dynamodb", "PutItem")] == JOBS, spent.requests
    assert spent.requests[("dynamodb", "BatchWriteItem")] == 0, spent.requests
    assert spent.dynamodb_reads == 0, spent.requests
    assert spent.service("sqs") / JOBS <= 0.35, spent.requests
    assert spent.requests[("sqs", "SendMessageBatch")] == JOBS // 10
