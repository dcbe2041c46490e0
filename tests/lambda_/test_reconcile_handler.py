"""The scheduled reconciler for deployments whose only workers are Lambda functions."""

from __future__ import annotations

import asyncio
import io
import json
import time
from typing import Any

import pytest

from sqsjobs import EmfMetrics, JobQueue, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler, make_reconcile_handler
from tests.aws.emulator import unique_prefix
from tests.support.clock import AheadClock
from tests.support.emf import documents


def test_a_job_whose_send_was_lost_gets_its_message(
    store: SqsJobStore, sqs: Any, aws_endpoint: str
) -> None:
    """``grace`` is judged on the store's clock, which the test moves: a loaded machine's
    pause between two invocations cannot make the record look stale before its time."""
    clock = AheadClock()
    moved = SqsJobStore(
        table_name=store.table_name,
        queue_urls=store.queue_urls,
        endpoint_url=aws_endpoint,
        clock=clock,
    )
    try:
        queue = SyncJobQueue(moved)
        enqueued = queue.enqueue("report.monthly", {"month": "2026-11"}).job
        url = store.queue_urls["default"]
        sqs.purge_queue(QueueUrl=url)  # as if SendMessage had failed after the PutItem
        handler = make_reconcile_handler(store=moved, grace=900)
        assert handler({}, None) == {"resent": 0, "dead": 0}  # not stale yet
        clock.offset = 901
        assert handler({"source": "aws.events"}, None) == {"resent": 1, "dead": 0}
        [message] = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
        assert json.loads(message["Body"])["id"] == enqueued.id
        assert handler({}, None) == {"resent": 0, "dead": 0}  # re-sent once per grace
    finally:
        moved.close()


async def test_a_job_the_redrive_policy_moved_is_recorded_dead(aws_endpoint: str) -> None:
    store = SqsJobStore.create(unique_prefix(), max_receive_count=1, endpoint_url=aws_endpoint)
    try:
        enqueued = (await JobQueue(store).enqueue("video.encode", lease=1)).job
        [job] = await store.claim("default", "lambda-a", time.time())  # the run crashes...
        assert job.id == enqueued.id
        await asyncio.sleep(3.2)  # its lease is over, by any clock within the 2 s margin
        # The next receive is past maxReceiveCount: SQS moves the message to the DLQ.
        assert await store.claim("default", "lambda-b", time.time(), wait=1) == []
        handler = make_reconcile_handler(store=store)
        assert handler({}, None) == {"resent": 0, "dead": 1}
        record = await JobQueue(store).get(enqueued.id)
        assert record is not None and record.status is JobStatus.DEAD
    finally:
        await store.aclose()


@pytest.mark.parametrize("grace", [-1.0, float("nan"), float("inf"), "900"])
def test_grace_is_a_finite_number_of_seconds(store: SqsJobStore, grace: Any) -> None:
    with pytest.raises(ValueError, match="grace"):
        make_reconcile_handler(store=store, grace=grace)


@pytest.mark.parametrize("margin", [-1.0, True, float("nan"), 901.0, "3"])
def test_the_safety_margin_is_a_number_of_seconds_up_to_lambdas_longest_timeout(
    store: SqsJobStore, margin: Any
) -> None:
    with pytest.raises(ValueError, match="safety_margin"):
        make_lambda_handler({"x": lambda ctx: None}, store=store, safety_margin=margin)


def test_after_its_pass_it_publishes_each_queues_open_jobs_waiting_ones_too(
    store: SqsJobStore,
) -> None:
    """A waiting job has no message, so no SQS metric sees it: the count is its gauge."""
    queue = SyncJobQueue(store)
    parent = queue.enqueue("invoice.render", {"invoice": "RE-2026-0412"}).job
    queue.enqueue("invoice.mail", {"to": "zoë@example.org"}, after=[parent.id])
    queue.enqueue("invoice.remind", {"invoice": "RE-2026-0412"}, delay=3600)
    out = io.StringIO()
    handler = make_reconcile_handler(store=store, metrics=EmfMetrics(stream=out))
    assert handler({}, None) == {"resent": 0, "dead": 0}
    by_queue = {d["Queue"]: d for d in documents(out.getvalue())}
    assert set(by_queue) == set(store.queue_urls)
    default = by_queue["default"]
    counted = {name: default[name] for name in ("QueuedJobs", "DelayedJobs", "RunningJobs")}
    assert counted == {"QueuedJobs": 1.0, "DelayedJobs": 1.0, "RunningJobs": 0.0}
    assert default["WaitingJobs"] == 1.0
    assert default["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["Queue"]]


def test_with_metrics_off_it_counts_nothing(
    store: SqsJobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unwanted(*args: object, **kwargs: object) -> None:
        raise AssertionError("a count was read with metrics off")

    monkeypatch.setattr(store.sync, "stats", unwanted)
    assert make_reconcile_handler(store=store, metrics="off")({}, None) == {"resent": 0, "dead": 0}
