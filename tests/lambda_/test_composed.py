"""The Lambda handler runs composed jobs as a worker does: a child released by its
parent's completion, handed the parent's result, and a batch's job counted."""

from __future__ import annotations

from typing import Any

from sqsjobs import EnqueueRequest, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler

from .conftest import Context, receive_event


def test_a_chain_and_a_batch_through_the_handler(store: SqsJobStore, sqs: Any) -> None:
    queue = SyncJobQueue(store)
    url = store.queue_urls["default"]
    parent = queue.enqueue("ledger.extract", {"rows": 40}).job
    child = queue.enqueue("ledger.load", after=[parent.id]).job
    handler = make_lambda_handler(
        {
            "ledger.extract": lambda payload: payload["rows"],
            "ledger.load": lambda ctx: sum(ctx.parent_results.values()) + 2,
            "ledger.summary": lambda ctx: ctx.batch.completed,
        },
        store=store,
    )
    assert handler(receive_event(sqs, url, 1), Context()) == {"batchItemFailures": []}
    assert queue.get(child.id).status is JobStatus.QUEUED  # type: ignore[union-attr]
    assert handler(receive_event(sqs, url, 1), Context()) == {"batchItemFailures": []}
    loaded = queue.get(child.id)
    assert loaded is not None and (loaded.status, loaded.result) == (JobStatus.COMPLETED, 42)

    batch = queue.batch(
        [EnqueueRequest("ledger.extract", {"rows": n}) for n in range(3)],
        on_complete=EnqueueRequest("ledger.summary"),
    )
    assert handler(receive_event(sqs, url, 3), Context()) == {"batchItemFailures": []}
    assert handler(receive_event(sqs, url, 1), Context()) == {"batchItemFailures": []}
    summary = queue.get(batch.callback_ids[0])
    assert summary is not None and (summary.status, summary.result) == (JobStatus.COMPLETED, 3)
