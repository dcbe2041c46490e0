"""The reconciler on the emulator, with instants that read like ``time.time()``.

About three in four real clock readings have digits below the microsecond; a record
written at such an instant must still be found and repaired (its conditions compare the
stored numbers, never a datetime's).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqsjobs import JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore

from ..support.clock import beyond_microseconds
from .conftest import depth


async def test_a_running_job_whose_message_was_lost_is_re_sent(
    store: SqsJobStore, sqs: Any
) -> None:
    queue = JobQueue(store)
    enqueued = (await queue.enqueue("report", lease=1)).job
    claimed_at = beyond_microseconds(time.time())
    [job] = await store.claim("default", "w", claimed_at)  # the worker writes updated_at
    url = store.queue_urls["default"]
    sqs.purge_queue(QueueUrl=url)  # ...and its message is lost with the worker
    assert depth(sqs, url) == 0
    await asyncio.sleep(1.3)  # the lease is over

    report = await store.reconcile(grace=0.2)
    assert (report.resent, report.dead) == (1, 0)
    [again] = await store.claim("default", "w", time.time(), wait=1)
    assert (again.id, again.attempts) == (enqueued.id, 2)
    assert await store.complete(again.id, again.lease_token or "", time.time(), None)
    assert job.lease_token != again.lease_token


async def test_a_retry_whose_send_failed_is_re_sent(store: SqsJobStore, sqs: Any) -> None:
    """A job that failed at an instant past the microsecond, its retry message lost."""
    queue = JobQueue(store)
    enqueued = (await queue.enqueue("report")).job
    [job] = await store.claim("default", "w", time.time())
    failed_at = beyond_microseconds(time.time())
    assert await store.fail(job.id, job.lease_token or "", "boom", failed_at + 0.1, failed_at)
    sqs.purge_queue(QueueUrl=store.queue_urls["default"])
    await asyncio.sleep(0.5)

    assert (await store.reconcile(grace=0.2)).resent == 1
    [again] = await store.claim("default", "w", time.time(), wait=1)
    assert (again.id, again.attempts) == (enqueued.id, 2)
    record = await queue.get(enqueued.id)
    assert record is not None and record.status is JobStatus.RUNNING
