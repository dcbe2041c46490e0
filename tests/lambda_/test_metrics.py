"""The Lambda handler's metrics: EMF lines on stdout by default, per queue and job name."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from sqsjobs import Backoff, EnqueueRequest, JobContext, JobFatalError, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler
from sqsjobs.aws.wire.sqs import body

from ..support.emf import documents, totals
from .conftest import Context, receive_event


def registry() -> dict[str, Any]:
    async def flaky(ctx: JobContext) -> None:
        raise TimeoutError(f"upstream slow on attempt {ctx.attempt}")

    def refund(payload: dict[str, int]) -> None:
        raise JobFatalError(f"refund of {payload['cents']} exceeds the charge")

    return {"thumb.make": lambda payload: {"w": payload["w"]}, "flaky": flaky, "refund": refund}


def test_one_batch_writes_emf_for_each_outcome_by_default(
    store: SqsJobStore, sqs: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.delenv("SQSJOBS_METRICS", raising=False)
    monkeypatch.setenv("SQSJOBS_METRICS_NAMESPACE", "Media/Jobs")
    queue = SyncJobQueue(store)
    began = time.time()
    done = queue.enqueue("thumb.make", {"w": 640}, tenant="lund-3").job
    queue.enqueue("thumb.make", {"w": 1280}, tenant="lund-3")
    queue.enqueue("flaky", {"src": "s3://bucket/ö.png"})
    queue.enqueue("refund", {"cents": 7301})
    # A second copy of the first job's message: claimed once, the copy is refused.
    sqs.send_message(QueueUrl=store.queue_urls["default"], MessageBody=body(done.id, "default"))
    handler = make_lambda_handler(
        registry(), store=store, backoff=Backoff(base=5.0, max=5.0, random=lambda: 1.0)
    )
    event = receive_event(sqs, store.queue_urls["default"], 5)
    capsys.readouterr()
    handler(event, Context())
    summed = totals(documents(capsys.readouterr().out, namespace="Media/Jobs"))
    timed = ("RunDuration", "QueueWait")
    assert {key: value for key, value in summed.items() if key[2] not in timed} == {
        ("default", "thumb.make", "JobsStarted"): 2,
        ("default", "thumb.make", "JobsCompleted"): 2,
        ("default", "flaky", "JobsStarted"): 1,
        ("default", "flaky", "JobsRetried"): 1,
        ("default", "refund", "JobsStarted"): 1,
        ("default", "refund", "JobsDead"): 1,
        ("default", "", "ClaimRefused"): 1,
    }
    waits = {name: value for (_, name, metric), value in summed.items() if metric == "QueueWait"}
    assert set(waits) == {"thumb.make", "flaky", "refund"}
    # Real time: each start came after its job was due, and within the test's span (the
    # waits of one name are summed over its starts).
    span = time.time() - began
    starts = {name: summed[("default", name, "JobsStarted")] for name in waits}
    assert all(0 <= wait <= starts[name] * span for name, wait in waits.items())


def test_metrics_off_in_the_environment_writes_nothing(
    store: SqsJobStore, sqs: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.setenv("SQSJOBS_METRICS", "off")
    SyncJobQueue(store).enqueue("thumb.make", {"w": 320})
    handler = make_lambda_handler(registry(), store=store)
    event = receive_event(sqs, store.queue_urls["default"], 1)
    capsys.readouterr()
    assert handler(event, Context()) == {"batchItemFailures": []}
    assert capsys.readouterr().out == ""


def test_an_explicit_choice_wins_over_the_environment(
    store: SqsJobStore, sqs: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.setenv("SQSJOBS_METRICS", "emf")
    SyncJobQueue(store).enqueue("thumb.make", {"w": 320})
    handler = make_lambda_handler(registry(), store=store, metrics="off")
    event = receive_event(sqs, store.queue_urls["default"], 1)
    capsys.readouterr()
    handler(event, Context())
    assert capsys.readouterr().out == ""


def test_unregistered_names_are_one_emf_dimension_value(
    store: SqsJobStore, sqs: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.delenv("SQSJOBS_METRICS", raising=False)
    monkeypatch.delenv("SQSJOBS_METRICS_NAMESPACE", raising=False)
    queue = SyncJobQueue(store).for_tenant("evil")
    queue.enqueue_many(
        [EnqueueRequest(f"probe.{n:02d}-{uuid.uuid4().hex[:8]}", {"n": n}) for n in range(50)]
    )
    queue.enqueue("thumb.make", {"w": 640})
    handler = make_lambda_handler(registry(), store=store)
    url = store.queue_urls["default"]
    capsys.readouterr()
    for size in (10, 10, 10, 10, 10, 1):  # Lambda's batches hold at most 10 records
        handler(receive_event(sqs, url, size), Context())
    docs = documents(capsys.readouterr().out)
    assert {d["JobName"] for d in docs} == {"(unregistered)", "thumb.make"}
    summed = totals(docs)
    assert summed[("default", "(unregistered)", "JobsStarted")] == 50
    assert summed[("default", "(unregistered)", "JobsDead")] == 50
    assert summed[("default", "thumb.make", "JobsCompleted")] == 1
