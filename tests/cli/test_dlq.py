"""``sqsjobs jobs retry`` and ``sqsjobs dlq list --peek|redrive``: dead jobs, seen and run again.

The messages themselves (receive counts, foreign bodies) are what ``--peek`` shows; the
default listing, from the records, is ``test_dlq_list``'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from sqsjobs import JobContext, JobFatalError, JobQueue, JobStatus, JobWorker, SyncJobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import Env, invoke

ROW = re.compile(
    r"^│ (?P<queue>\S+) +│ (?P<job>[0-9a-f]{32}|message \S+) +│ (?P<name>[^│]+?) +│"
    r" (?P<status>\w*) +│ (?P<attempts>[\d/]*) +│ (?P<receives>\d+) +│"
)


@pytest.fixture
def sqs(aws_endpoint: str) -> Iterator[Any]:
    """A plain SQS client, to play a foreign producer writing to the DLQ."""
    client = boto3.client("sqs", endpoint_url=aws_endpoint)
    yield client
    client.close()


def rows(output: str) -> list[dict[str, str]]:
    return [m.groupdict() for line in output.splitlines() if (m := ROW.match(line))]


def refuse(ctx: JobContext) -> None:
    raise JobFatalError("the warehouse refused this order")


async def dead_job(store: SqsJobStore) -> str:
    """A job its handler dead-lettered; the store's asyncio clients closed again."""
    queue = JobQueue(store)
    try:
        job = (await queue.enqueue("order.ship", {"order": 7})).job
        assert await JobWorker(queue, {"order.ship": refuse}).run_once()
    finally:
        await store.aclose()
    return job.id


async def complete(store: SqsJobStore, job_id: str) -> None:
    queue = JobQueue(store)
    try:
        assert await JobWorker(queue, {"order.ship": lambda ctx: "shipped"}).run_once()
        job = await queue.get(job_id)
    finally:
        await store.aclose()
    assert job is not None and (job.status, job.attempts) == (JobStatus.COMPLETED, 1)


async def test_retry_queues_a_dead_job_again_then_refuses(cli_env: Env, store: SqsJobStore) -> None:
    job_id = await dead_job(store)
    first = invoke(cli_env, "jobs", "retry", job_id)
    assert (first.exit_code, first.stdout) == (
        0,
        f"Retrying job {job_id}: queued again with its attempts reset\n",
    )
    job = SyncJobQueue(store).get(job_id)
    assert job is not None and (job.status, job.attempts) == (JobStatus.QUEUED, 0)

    again = invoke(cli_env, "jobs", "retry", job_id)
    assert again.exit_code == 1
    assert again.stderr == f"error: Job {job_id} is queued; only dead jobs can be retried\n"
    unknown = invoke(cli_env, "jobs", "retry", "f" * 32)
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith(f"error: No job '{'f' * 32}' (unknown")
    await complete(store, job_id)


async def test_dlq_list_peek_shows_dead_jobs_and_foreign_messages(
    cli_env: Env, store: SqsJobStore, sqs: Any
) -> None:
    job_id = await dead_job(store)
    dead_letters_url = store.dead_letter_queue_urls["default"]
    sqs.send_message(QueueUrl=dead_letters_url, MessageBody="hello")
    gone = json.dumps({"v": 1, "id": "f" * 32, "queue": "default", "lease": 30})
    sqs.send_message(QueueUrl=dead_letters_url, MessageBody=gone)

    result = invoke(cli_env, "dlq", "list", "--peek")
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("Peeking receives each dead-letter message")
    assert "Dead letters of every queue (3)" in result.stdout
    found = {row["job"][:7]: row for row in rows(result.stdout)}
    assert found[job_id[:7]] == {
        "queue": "default",
        "job": job_id,
        "name": "order.ship",
        "status": "dead",
        "attempts": "1/5",
        "receives": "1",
    }
    assert "JobFatalError: the warehouse refused" in result.stdout  # long ones end in …
    assert found["message"]["name"] == found["fffffff"]["name"] == "-"
    assert "│ not a job message " in result.stdout
    assert "│ no record (expired or never written) " in result.stdout
    header = next(line for line in result.stdout.splitlines() if line.startswith("┃ queue"))
    assert re.match(r"┃ queue +┃ job id +┃ name +┃ status +┃ attempts +┃ receives +┃", header)

    first = invoke(cli_env, "dlq", "list", "--peek", "--limit", "1", "--queue", "default")
    assert len(rows(first.stdout)) == 1
    assert "raise --limit" in first.stdout


async def test_dlq_redrive_sends_the_job_back_and_a_worker_completes_it(
    cli_env: Env, store: SqsJobStore, sqs: Any
) -> None:
    job_id = await dead_job(store)
    dead_letters_url = store.dead_letter_queue_urls["default"]
    sqs.send_message(QueueUrl=dead_letters_url, MessageBody="hello")

    result = invoke(cli_env, "dlq", "redrive")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "Redriven 1 job(s) to their queues; discarded 0 message(s) of finished or missing "
        "jobs; skipped 1 message(s), left in the dead-letter queue\n"
    )
    assert result.stderr == ""  # no progress display outside a terminal
    job = SyncJobQueue(store).get(job_id)
    assert job is not None and (job.status, job.attempts) == (JobStatus.QUEUED, 0)
    await complete(store, job_id)
    [left] = rows(invoke(cli_env, "dlq", "list", "--peek").stdout)
    assert left["job"].startswith("message ")


def test_bad_queues_and_limits_are_bad_usage(cli_env: Env) -> None:
    for args in (
        ["dlq", "list", "--queue", "nowhere"],
        ["dlq", "list", "--peek", "--queue", "nowhere"],
        ["dlq", "redrive", "--queue", "nowhere"],
        ["dlq", "redrive", "--limit", "0"],
        ["dlq", "list", "--limit", "1001"],
    ):
        result = invoke(cli_env, *args)
        assert result.exit_code == 2, (args, result.output)
        assert "Error: " in result.stderr, result.stderr
    for peek in ([], ["--peek"]):
        nowhere = invoke(cli_env, "dlq", "list", *peek, "--queue", "nowhere")
        assert "Queue 'nowhere' has no SQS queue in this store" in nowhere.stderr
