"""A message body names a job and nothing more: whoever may send to a queue cannot
change how a job is run.

The producer policy allows ``sqs:SendMessage``; a body that could set the lease would let
anyone holding it cut a run's lease to nothing and dead-letter a healthy final attempt.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from sqsjobs import JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore


def forged(job_id: str, lease: float) -> str:
    """A body of the first format, which carried a lease (still read, its lease ignored)."""
    return json.dumps({"v": 1, "id": job_id, "queue": "default", "lease": lease})


async def test_a_forged_lease_cannot_dead_letter_a_final_attempt(
    store: SqsJobStore, sqs: Any
) -> None:
    queue = JobQueue(store)
    enqueued = (await queue.enqueue("payment.capture", lease=30, max_attempts=1)).job
    url = store.queue_urls["default"]
    sqs.purge_queue(QueueUrl=url)  # only forged messages from here on
    sqs.send_message(QueueUrl=url, MessageBody=forged(enqueued.id, 0.01))
    claimed_at = time.time()
    [job] = await store.claim("default", "w1", claimed_at, wait=1)
    assert job.lease_until is not None
    assert job.lease_until.timestamp() >= claimed_at + 29  # the record's 30 s, not 0.01

    sqs.send_message(QueueUrl=url, MessageBody=forged(enqueued.id, 0.01))
    await asyncio.sleep(0.2)
    assert await store.claim("default", "w2", time.time(), wait=1) == []
    record = await queue.get(enqueued.id)
    assert record is not None
    assert (record.status, record.lease_token) == (JobStatus.RUNNING, job.lease_token)
    assert await store.complete(job.id, job.lease_token or "", time.time(), {"ok": True})
    done = await queue.get(enqueued.id)
    assert done is not None and done.status is JobStatus.COMPLETED


async def test_a_body_written_before_an_upgrade_still_delivers_its_job(
    store: SqsJobStore, sqs: Any
) -> None:
    queue = JobQueue(store)
    enqueued = (await queue.enqueue("report.build", lease=20)).job
    url = store.queue_urls["default"]
    sqs.purge_queue(QueueUrl=url)
    sqs.send_message(QueueUrl=url, MessageBody=forged(enqueued.id, 5.0))
    claimed_at = time.time()
    [job] = await store.claim("default", "w", claimed_at, wait=1)
    assert (job.id, job.attempts, job.lease) == (enqueued.id, 1, 20.0)
    assert job.lease_until is not None and job.lease_until.timestamp() >= claimed_at + 19
    assert await store.complete(job.id, job.lease_token or "", time.time(), None)


async def test_new_messages_name_the_job_and_its_queue_only(store: SqsJobStore, sqs: Any) -> None:
    enqueued = (await JobQueue(store).enqueue("report.build")).job
    [message] = sqs.receive_message(QueueUrl=store.queue_urls["default"])["Messages"]
    assert json.loads(message["Body"]) == {"v": 2, "id": enqueued.id, "queue": "default"}
