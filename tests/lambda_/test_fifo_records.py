"""The Lambda handler on FIFO records the store itself sent: in order, and dead letters
copied to the FIFO DLQ with their group."""

from __future__ import annotations

from typing import Any

from sqsjobs import JobContext, JobFatalError, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler

from .conftest import Context, receive_event


def test_fifo_records_from_the_store_run_in_order_and_dead_ones_keep_their_group(
    fifo_store: SqsJobStore, sqs: Any
) -> None:
    store = fifo_store
    queue = SyncJobQueue(store)
    jobs = [queue.enqueue("post", {"n": n}, tenant="acme").job for n in range(3)]
    ran: list[int] = []

    def post(ctx: JobContext) -> None:
        ran.append(ctx.payload["n"])
        if ctx.payload["n"] == 1:
            raise JobFatalError("account closed")

    handler = make_lambda_handler({"post": post}, store=store)
    event = receive_event(sqs, store.queue_urls["default"], 3)
    assert [r["attributes"]["MessageGroupId"] for r in event["Records"]] == ["acme"] * 3
    assert handler(event, Context()) == {"batchItemFailures": []}
    assert ran == [0, 1, 2]
    statuses = [queue.get(job.id).status for job in jobs]  # type: ignore[union-attr]
    assert statuses == [JobStatus.COMPLETED, JobStatus.DEAD, JobStatus.COMPLETED]
    dead_letter_url = store.dead_letter_queue_urls["default"]
    [copy] = sqs.receive_message(
        QueueUrl=dead_letter_url, WaitTimeSeconds=1, MessageSystemAttributeNames=["All"]
    )["Messages"]
    assert copy["Attributes"]["MessageGroupId"] == "acme"
    assert jobs[1].id in copy["Body"]
