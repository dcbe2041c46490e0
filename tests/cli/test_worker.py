"""``sqsjobs worker`` as a real process: it serves, drains on a real SIGTERM, and reconciles.

The worker is the console script in a subprocess, configured as on ECS (from a stack, or
from ``SQSJOBS_*`` and ``AWS_ENDPOINT_URL``), reaching this session's emulator over HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import cast

import boto3
import pytest

from sqsjobs import Job, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.cli._worker import reconcile_periodically
from sqsjobs.infra import deploy_stack
from tests.aws.emulator import unique_prefix
from tests.support.processes import ended

from .conftest import Env, invoke, wait_until
from .handlers import SLEEP_CAP

SCRIPT = Path(sys.executable).with_name("sqsjobs")
ROOT = Path(__file__).parents[2]
REGISTRY = "tests.cli.handlers:registry"


@pytest.fixture
def stack(aws_endpoint: str) -> str:
    name = unique_prefix()
    with pytest.warns(UserWarning, match="Tried to parse AWS::CloudWatch::Alarm"):
        deploy_stack(name, endpoint_url=aws_endpoint)
    return name


@pytest.fixture
def stack_store(stack: str, aws_endpoint: str) -> Iterator[SqsJobStore]:
    store = SqsJobStore.from_stack(stack, endpoint_url=aws_endpoint)
    try:
        yield store
    finally:
        store.close()


def start_worker(
    env: Mapping[str, str | None], *args: str, registry: str = REGISTRY
) -> subprocess.Popen[str]:
    merged = {**os.environ, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1", **env}
    return subprocess.Popen(
        [str(SCRIPT), "worker", registry, *args],
        cwd=ROOT,
        env={key: value for key, value in merged.items() if value is not None},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop(process: subprocess.Popen[str]) -> str:
    """SIGTERM, as ECS sends it; the worker's log once it has exited."""
    process.send_signal(signal.SIGTERM)
    _, log = process.communicate(timeout=30)
    return log


def get(store: SqsJobStore, job_id: str) -> Job:
    job = SyncJobQueue(store).get(job_id)
    assert job is not None
    return job


@pytest.mark.slow
def test_sigterm_drains_and_a_second_worker_finishes_the_released_job(
    stack: str, stack_store: SqsJobStore, aws_endpoint: str
) -> None:
    producer = SyncJobQueue(stack_store)
    quick = producer.enqueue("sleep", {"seconds": 1.0}).job.id
    slow = producer.enqueue("sleep", {"seconds": 120}).job.id
    env = {"AWS_ENDPOINT_URL": aws_endpoint, SLEEP_CAP: None}
    first = start_worker(env, "--stack", stack, "--concurrency", "2", "--grace", "2.5")
    try:
        wait_until(
            lambda: {get(stack_store, j).status for j in (quick, slow)} == {JobStatus.RUNNING},
            what="both jobs to be running",
        )
        log = stop(first)
    finally:
        ended(first)
    assert first.returncode == 0, log
    done, released = get(stack_store, quick), get(stack_store, slow)
    assert (done.status, done.attempts, done.result) == (JobStatus.COMPLETED, 1, {"slept": 1.0})
    assert (released.status, released.attempts) == (JobStatus.QUEUED, 0)
    assert released.last_error == "worker is stopping"
    assert "Released job 'sleep'" in log and "stopped" in log

    second = start_worker({**env, SLEEP_CAP: "0"}, "--stack", stack)
    try:
        wait_until(lambda: get(stack_store, slow).status is JobStatus.COMPLETED, what="the rerun")
        log = stop(second)
    finally:
        ended(second)
    assert second.returncode == 0, log
    assert get(stack_store, slow).attempts == 1


def lose_message(store: SqsJobStore, endpoint: str) -> str:
    """A job enqueued an hour ago whose message never reached SQS (a producer crash)."""
    an_hour_ago = time.time() - 3600
    job = SyncJobQueue(store, clock=lambda: an_hour_ago).enqueue("sleep", {"seconds": 0}).job
    sqs = boto3.client("sqs", endpoint_url=endpoint)
    try:
        url = store.queue_urls["default"]
        [message] = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    finally:
        sqs.close()
    return job.id


@pytest.mark.slow
def test_the_worker_reconciles_while_serving(
    store: SqsJobStore, cli_env: Env, aws_endpoint: str
) -> None:
    lost = lose_message(store, aws_endpoint)
    worker = start_worker(cli_env, "--reconcile-every", "60")
    try:
        wait_until(lambda: get(store, lost).status is JobStatus.COMPLETED, what="the lost job")
        log = stop(worker)
    finally:
        ended(worker)
    assert worker.returncode == 0, log
    assert "Reconciler re-sent 1 lost message(s)" in log


def test_reconcile_re_sends_a_lost_message(store: SqsJobStore, cli_env: Env) -> None:
    lost = lose_message(store, str(cli_env["AWS_ENDPOINT_URL"]))
    result = invoke(cli_env, "reconcile")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Reconciled default: re-sent 1 lost message(s); 0 job(s)")
    assert get(store, lost).status is JobStatus.QUEUED
    assert waiting_messages(store, str(cli_env["AWS_ENDPOINT_URL"])) == 1
    assert invoke(cli_env, "reconcile").stdout.startswith("Reconciled default: re-sent 0")


def waiting_messages(store: SqsJobStore, endpoint: str) -> int:
    sqs = boto3.client("sqs", endpoint_url=endpoint)
    try:
        attributes = sqs.get_queue_attributes(
            QueueUrl=store.queue_urls["default"], AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
    finally:
        sqs.close()
    return int(attributes["ApproximateNumberOfMessages"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere.jobs:registry"], "no module named 'nowhere.jobs'"),
        (["tests.cli.handlers:missing"], "module 'tests.cli.handlers' has no attribute 'missing'"),
        (["tests.cli.handlers:not_a_registry"], "is of type int, not a JobRegistry"),
        (["tests.cli.handlers"], "expected MODULE:REGISTRY"),
        (["tests.cli.handlers:empty"], "The handler registry is empty"),
        ([REGISTRY, "--queue", "elsewhere"], "Unknown queue(s) elsewhere; this store has default"),
        ([REGISTRY, "--wait-time", "25"], "25.0 is not in the range 1.0<=x<=20.0"),
        ([REGISTRY, "--wait-time", "0.5"], "0.5 is not in the range 1.0<=x<=20.0"),
    ],
)
def test_a_bad_registry_or_queue_exits_2(cli_env: Env, args: list[str], message: str) -> None:
    result = invoke(cli_env, "worker", *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr


async def test_a_failed_reconciler_pass_logs_one_line_without_credentials(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tried = asyncio.Event()

    class Unreachable:
        async def reconcile(self) -> None:
            tried.set()  # the pass fails and logs before the task next yields
            raise ConnectionError(
                'Could not connect to the endpoint URL: "http://AKIAEXAMPLE:s3cret@127.0.0.1:9/"'
                "\nINFO sqsjobs.cli Reconciler re-sent 0 lost message(s)"
            )

    with caplog.at_level(logging.WARNING, logger="sqsjobs.cli"):
        task = asyncio.create_task(reconcile_periodically(cast(SqsJobStore, Unreachable()), 3600))
        await tried.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    [record] = caplog.records
    assert record.getMessage() == (
        "Reconciler pass failed (will retry in 3600s): ConnectionError: Could not connect to the "
        'endpoint URL: "http://***@127.0.0.1:9/"\\nINFO sqsjobs.cli Reconciler re-sent 0 lost '
        "message(s)"
    )


def test_a_dead_letter_queue_given_as_a_work_queue_exits_2(
    store: SqsJobStore, cli_env: Env
) -> None:
    """The wrong URL copied into SQSJOBS_QUEUES stops the worker before it serves anything."""
    mixed_up = {**cli_env, "SQSJOBS_QUEUES": f"default={store.dead_letter_queue_urls['default']}"}
    result = invoke(mixed_up, "worker", REGISTRY)
    assert result.exit_code == 2, result.output
    assert "is the dead-letter queue of" in result.stderr
