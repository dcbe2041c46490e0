"""The handler keeps the long visibility Lambda's event source mapping gave its messages.

A queue read by Lambda has a visibility timeout of at least the function's timeout (six
times it, by AWS's advice). A claim shortens it for no job: the handler hands a job back
itself by its invocation's deadline, so a shorter lease would cost a request per batch
and buy nothing.
"""

from __future__ import annotations

from typing import Any

from sqsjobs import SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler

from ..aws.emulator import COUNTER
from .conftest import Context, receive_event


def test_a_claim_does_not_shorten_the_mapping_s_visibility(store: SqsJobStore, sqs: Any) -> None:
    url = store.queue_urls["default"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "180"})
    described = SqsJobStore(settings=store.settings)  # learns 180 from the queue itself
    try:
        queue = SyncJobQueue(described)
        jobs = [queue.enqueue("add", {"a": n, "b": 2}, lease=30.0).job for n in range(3)]
        handlers = {"add": lambda payload: payload["a"] + payload["b"]}
        handler = make_lambda_handler(handlers, store=described)
        event = receive_event(sqs, url, 3)
        before = COUNTER.counts()
        assert handler(event, Context()) == {"batchItemFailures": []}
        spent = COUNTER.counts() - before
        changes = {a: n for (s, a), n in spent.requests.items() if a.startswith("ChangeMessage")}
        assert changes == {}
        assert [queue.get(job.id).result for job in jobs] == [2, 3, 4]  # type: ignore[union-attr]
    finally:
        described.close()
