"""Clocks disagree between hosts: a claim takes over a lease only ``clock_skew`` after it ended.

The holder extends its lease by its own clock; a claimer whose clock runs ahead would
otherwise start a second run while the first is alive and heartbeating.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from sqsjobs import JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore


def duplicate(job_id: str) -> str:
    """A second delivery of the job (in the first body format, which every release reads)."""
    return json.dumps({"v": 1, "id": job_id, "queue": "default", "lease": 1.0})


async def test_a_claimer_whose_clock_runs_ahead_does_not_take_a_live_lease(
    aws_endpoint: str, prefix: str, sqs: Any
) -> None:
    store = SqsJobStore.create(prefix, endpoint_url=aws_endpoint)  # clock_skew: 2 s
    try:
        queue = JobQueue(store)
        enqueued = (await queue.enqueue("invoice.render", lease=1)).job
        [held] = await store.claim("default", "host-a", time.time())
        sqs.send_message(QueueUrl=store.queue_urls["default"], MessageBody=duplicate(held.id))
        await asyncio.sleep(0.2)
        ahead = time.time() + 1.5  # host b's clock: the lease looks over by 0.3 s
        assert await store.claim("default", "host-b", ahead, wait=1) == []
        record = await queue.get(enqueued.id)
        assert record is not None
        assert (record.status, record.lease_token) == (JobStatus.RUNNING, held.lease_token)

        await asyncio.sleep(3.0)  # over by any clock within the margin
        [taken] = await store.claim("default", "host-b", time.time() + 1.5, wait=3)
        assert (taken.id, taken.attempts) == (enqueued.id, 2)
        assert await store.complete(taken.id, taken.lease_token or "", time.time(), None)
    finally:
        await store.aclose()


@pytest.mark.parametrize("skew", [-1.0, float("nan"), float("inf"), 301.0, True])
def test_clock_skew_is_a_bounded_number_of_seconds(skew: Any) -> None:
    with pytest.raises(ValueError, match="clock_skew"):
        SqsJobStore(table_name="jobs", queue_urls={"default": "https://q"}, clock_skew=skew)
