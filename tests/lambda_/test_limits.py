"""A Lambda record whose handler's limit is full is deferred: reported, hidden, not counted."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqsjobs import JobContext, JobRegistry, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler

from .conftest import Context, receive_event
from .test_handler import visible


def test_a_record_over_its_handlers_limit_is_reported_and_hidden(
    store: SqsJobStore, sqs: Any
) -> None:
    queue = SyncJobQueue(store)
    jobs = [queue.enqueue("report.build", {"n": n}, tenant="acme").job for n in range(2)]
    registry = JobRegistry()

    @registry.handler("report.build", concurrency=1)
    async def build(ctx: JobContext) -> int:
        await asyncio.sleep(0.2)
        return int(ctx.payload["n"])

    handler = make_lambda_handler(registry, store=store)
    url = store.queue_urls["default"]
    event = receive_event(sqs, url, 2)
    reply = handler(event, Context())
    records = [queue.get(job.id) for job in jobs]
    done = [j for j in records if j is not None and j.status is JobStatus.COMPLETED]
    deferred = [j for j in records if j is not None and j.status is JobStatus.DELAYED]
    assert (len(done), len(deferred)) == (1, 1)
    waiting = deferred[0]
    assert waiting.attempts == 0  # the deferral spent no attempt
    assert waiting.last_error == (
        "deferred: concurrency limit 'concurrency/report.build' (1) reached"
    )
    by_id = {r["messageId"]: r for r in event["Records"]}
    reported = [f["itemIdentifier"] for f in reply["batchItemFailures"]]
    assert len(reported) == 1 and waiting.id in by_id[reported[0]]["body"]
    assert visible(sqs, url) == 0  # hidden until its short delay ends, not back at once
    deadline = time.monotonic() + 10
    while visible(sqs, url) == 0:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert handler(receive_event(sqs, url, 1), Context()) == {"batchItemFailures": []}
    finished = queue.get(waiting.id)
    assert finished is not None and (finished.status, finished.attempts) == (
        JobStatus.COMPLETED,
        1,
    )
