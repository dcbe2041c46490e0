"""A paused queue with a real ``sqsjobs worker`` process and with the Lambda handler: held
for longer than ``maxReceiveCount`` receives would take, nothing starts and nothing dies;
after the resume every job runs once, the first within seconds."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import boto3
import pytest

from sqsjobs import JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler
from tests.aws.emulator import unique_prefix
from tests.chaos.test_chaos import Fleet, SideEffects, records, wait_started, worker_env
from tests.lambda_.conftest import Context, record

JOBS = 50
VISIBILITY = 2  # seconds: the queue's, so maxReceiveCount receives take 4 s
PAUSED_FOR = 14.0  # several times that, and more than a worker's re-read of the pause
RESUMED_WITHIN = 10.0


def paused_store(endpoint: str) -> SqsJobStore:
    store = SqsJobStore.create(unique_prefix(), max_receive_count=2, endpoint_url=endpoint)
    sqs = boto3.client("sqs", endpoint_url=endpoint)
    for url in store.queue_urls.values():
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": str(VISIBILITY)})
    sqs.close()
    return store


def dead_letters(store: SqsJobStore, endpoint: str) -> int:
    sqs = boto3.client("sqs", endpoint_url=endpoint)
    url = store.dead_letter_queue_urls["default"]
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    sqs.close()
    return sum(int(attributes[name]) for name in names)


@pytest.mark.slow
def test_a_worker_process_starts_nothing_while_paused_and_everything_after(
    aws_endpoint: str, tmp_path: Path
) -> None:
    store = paused_store(aws_endpoint)
    store.sync.describe("default")  # learns its DLQ
    queue = SyncJobQueue(store)
    side_effects = SideEffects(tmp_path / "side-effects.log")
    fleet = Fleet(worker_env(store, aws_endpoint, side_effects.path), tmp_path)
    try:
        fleet.workers = [fleet.start()]
        wait_started(fleet.workers[0])
        queue.pause("default")
        ids = [queue.enqueue("chaos.step", {"n": n, "kunde": "Zoë"}).job.id for n in range(JOBS)]
        held_until = time.monotonic() + PAUSED_FOR
        while time.monotonic() < held_until:
            side_effects.read()
            assert side_effects.runs == [], "a job started on a paused queue"
            fleet.check_alive()
            time.sleep(0.2)
        assert dead_letters(store, aws_endpoint) == 0
        assert {job.status for job in records(store, aws_endpoint, ids).values()} == {
            JobStatus.QUEUED
        }
        resumed = time.monotonic()
        queue.resume("default")
        first = None
        while len(side_effects.jobs) < JOBS:
            side_effects.read()
            if first is None and side_effects.runs:
                first = time.monotonic() - resumed
            assert time.monotonic() - resumed < 120, f"{len(side_effects.jobs)} of {JOBS} ran"
            time.sleep(0.1)
        assert first is not None and first < RESUMED_WITHIN, first
        assert fleet.drain() == [0]
    finally:
        fleet.kill_all()
        store.close()
    final = records(store, aws_endpoint, ids)
    assert {job.status for job in final.values()} == {JobStatus.COMPLETED}
    assert len(side_effects.runs) == JOBS  # each ran once
    assert dead_letters(store, aws_endpoint) == 0


class Mapping:
    """Lambda's event source mapping, played by hand: receive batches of ten with the
    function's visibility, invoke the handler, delete what it did not name."""

    def __init__(self, store: SqsJobStore, endpoint: str, handler: Any) -> None:
        self._sqs = boto3.client("sqs", endpoint_url=endpoint)
        self._url = store.queue_urls["default"]
        self._arn = self._sqs.get_queue_attributes(QueueUrl=self._url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        self._handler = handler
        self.most_receives = 0

    def poll(self) -> int:
        """One receive and invocation; how many records it delivered."""
        messages = self._sqs.receive_message(
            QueueUrl=self._url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=1,
            AttributeNames=["All"],
            VisibilityTimeout=30,
        ).get("Messages", [])
        if not messages:
            return 0
        counts = [int(m["Attributes"]["ApproximateReceiveCount"]) for m in messages]
        self.most_receives = max(self.most_receives, *counts)
        event = {"Records": [record(m, self._arn) for m in messages]}
        failures = self._handler(event, Context())["batchItemFailures"]
        named = {failure["itemIdentifier"] for failure in failures}
        for message in messages:
            if message["MessageId"] not in named:
                self._sqs.delete_message(QueueUrl=self._url, ReceiptHandle=message["ReceiptHandle"])
        return len(messages)

    def close(self) -> None:
        self._sqs.close()


@pytest.mark.slow
def test_the_lambda_handler_holds_a_paused_queues_records_without_dead_letters(
    aws_endpoint: str,
) -> None:
    store = paused_store(aws_endpoint)
    store.sync.describe("default")
    queue = SyncJobQueue(store)
    ran: list[tuple[str, float]] = []
    handler = make_lambda_handler(
        {"report.render": lambda payload: ran.append((payload["n"], time.monotonic()))},
        store=store,
        metrics="off",
    )
    mapping = Mapping(store, aws_endpoint, handler)
    try:
        queue.pause("default")
        ids = [queue.enqueue("report.render", {"n": n}).job.id for n in range(JOBS)]
        held_until = time.monotonic() + 20
        delivered = 0
        while time.monotonic() < held_until:
            delivered += mapping.poll()
        assert ran == []  # the mapping kept delivering; nothing started
        # More deliveries than the redrive policy allows the messages sent: the ones that
        # ran low on receives were re-sent fresh, and none went to the dead-letter queue.
        assert delivered > JOBS * 2 and mapping.most_receives <= 2
        assert dead_letters(store, aws_endpoint) == 0
        resumed = time.monotonic()
        queue.resume("default")
        while len(ran) < JOBS:
            mapping.poll()
            assert time.monotonic() - resumed < 120, f"{len(ran)} of {JOBS} ran"
        assert ran[0][1] - resumed < RESUMED_WITHIN
    finally:
        mapping.close()
        store.close()
    assert sorted(n for n, _ in ran) == list(range(JOBS))  # each once
    assert dead_letters(store, aws_endpoint) == 0
    final = records(store, aws_endpoint, ids)
    assert {job.status for job in final.values()} == {JobStatus.COMPLETED}
