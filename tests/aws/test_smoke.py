from __future__ import annotations

import time

from sqsjobs import JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore


async def test_enqueue_claim_complete(store: SqsJobStore) -> None:
    queue = JobQueue(store)
    result = await queue.enqueue("email.send", {"to": "a@example.com"})
    assert not result.duplicate
    jobs = await store.claim("default", "w1", time.time(), limit=5, wait=1)
    assert [j.id for j in jobs] == [result.job.id]
    job = jobs[0]
    assert job.status is JobStatus.RUNNING and job.attempts == 1
    assert job.lease_token is not None
    assert await store.complete(job.id, job.lease_token, time.time(), {"ok": True})
    got = await queue.get(job.id)
    assert got is not None and got.status is JobStatus.COMPLETED and got.result == {"ok": True}
