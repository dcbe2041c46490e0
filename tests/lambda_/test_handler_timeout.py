"""The Lambda handler enforces a handler's declared timeout as the worker does (one run path)."""

from __future__ import annotations

import asyncio
from typing import Any

from sqsjobs import JobContext, JobRegistry, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler

from .conftest import Context, receive_event


def slow_registry() -> JobRegistry:
    registry = JobRegistry()

    @registry.handler("video.transcode", timeout=0.3)
    async def transcode(ctx: JobContext) -> str:
        await asyncio.sleep(3.0)
        return "transcoded"

    return registry


def test_a_defaulted_timeout_gives_way_to_the_handlers(store: SqsJobStore, sqs: Any) -> None:
    queue = SyncJobQueue(store)  # no registry: the record says 30 s, by default
    job = queue.enqueue("video.transcode", {"título": "Año nuevo"}, max_attempts=1).job
    handler = make_lambda_handler(slow_registry(), store=store)
    assert handler(receive_event(sqs, store.queue_urls["default"], 1), Context()) == {
        "batchItemFailures": []  # dead: sent to the DLQ, so Lambda may delete the message
    }
    dead = queue.get(job.id)
    assert dead is not None and dead.status is JobStatus.DEAD
    assert dead.last_error == "JobTimeoutError: Job exceeded its timeout of 0.3s and was cancelled."


def test_an_explicit_timeout_wins_over_the_handlers(store: SqsJobStore, sqs: Any) -> None:
    queue = SyncJobQueue(store)
    job = queue.enqueue("video.transcode", None, max_attempts=1, timeout=60).job
    handler = make_lambda_handler(slow_registry(), store=store)
    handler(receive_event(sqs, store.queue_urls["default"], 1), Context())
    done = queue.get(job.id)
    assert done is not None and (done.status, done.result) == (JobStatus.COMPLETED, "transcoded")
