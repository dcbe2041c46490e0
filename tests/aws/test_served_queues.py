"""A worker given no queue list serves every queue its SqsJobStore is configured with."""

from __future__ import annotations

import asyncio

from sqsjobs import Job, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore

from .conftest import QUEUES


async def test_jobs_on_every_configured_queue_are_run(store: SqsJobStore) -> None:
    assert tuple(store.queue_urls) == QUEUES == ("default", "other")
    producer = JobQueue(store)
    jobs = [
        (await producer.enqueue("ledger.post", {"cuenta": "Caja €", "n": n}, queue=q)).job
        for n, q in enumerate(QUEUES * 2)
    ]
    finished: list[Job] = []
    all_done = asyncio.Event()

    def on_complete(job: Job) -> None:
        finished.append(job)
        if len(finished) == len(jobs):
            all_done.set()

    worker = JobWorker(
        producer, {"ledger.post": lambda ctx: ctx.job.queue}, concurrency=2, on_complete=on_complete
    )
    async with worker:
        await asyncio.wait_for(all_done.wait(), timeout=30)
    assert sorted(job.queue for job in finished) == ["default", "default", "other", "other"]
    for job in jobs:
        stored = await producer.get(job.id)
        assert stored is not None
        assert (stored.status, stored.result) == (JobStatus.COMPLETED, job.queue)
