"""``sqsjobs stats``: one aligned row per queue, exact counts by status and SQS depths."""

from __future__ import annotations

import json
import re
import time

import boto3

from sqsjobs import JobContext, JobFatalError, JobQueue, JobWorker, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.core.presence import PRESENCE_TTL, WorkerPresence
from sqsjobs.core.times import utc

from .conftest import Env, invoke

HEADER = re.compile(
    r"┃ +┃ +┃ +┃ +┃ +┃ +┃ +┃ +SQS ┃ +SQS ┃ +SQS ┃ +┃\n"
    r"┃ queue +┃ queued ┃ delayed ┃ running ┃ completed ┃ dead ┃ cancelled ┃"
    r" visible ┃ in flight ┃ delayed ┃ DLQ ┃"
)


def row(output: str, queue: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.startswith(f"│ {queue} "))
    return [cell.strip() for cell in line.strip("│").split("│")]


def refuse(ctx: JobContext) -> None:
    raise JobFatalError("refused")


async def test_stats_shows_every_status_and_the_queue_depths(
    cli_env: Env, store: SqsJobStore
) -> None:
    queue = JobQueue(store)
    try:
        running = (await queue.enqueue("order.ship")).job
        assert [j.id for j in await store.claim("default", "w", time.time())] == [running.id]
        await queue.enqueue("order.pack")
        assert await JobWorker(queue, {"order.pack": lambda ctx: None}).run_once()
        await queue.enqueue("order.void")
        assert await JobWorker(queue, {"order.void": refuse}).run_once()
    finally:
        await store.aclose()  # also sends the completed job's batched delete
    producer = SyncJobQueue(store)
    for n in range(2):
        producer.enqueue("order.ship", {"n": n})
    producer.enqueue("order.ship", delay=600)
    producer.cancel(producer.enqueue("order.ship").job.id)

    result = invoke(cli_env, "stats")
    assert result.exit_code == 0, result.output
    assert HEADER.search(result.stdout), result.stdout
    # queued delayed running completed dead cancelled | visible in-flight delayed | DLQ
    assert row(result.stdout, "default") == [
        "default",
        "2",
        "1",
        "1",
        "1",
        "1",
        "1",
        "3",
        "1",
        "1",
        "1",
    ]
    same = invoke(cli_env, "stats", "--queue", "default")
    assert row(same.stdout, "default") == row(result.stdout, "default")


def test_stats_of_an_unknown_queue_is_bad_usage(cli_env: Env) -> None:
    result = invoke(cli_env, "stats", "--queue", "nowhere")
    assert result.exit_code == 2
    assert "Error: Queue 'nowhere' has no SQS queue in this store" in result.stderr


def rows(output: str, queue: str) -> list[list[str]]:
    """Every table row of ``queue``: the jobs table's, then the workers table's."""
    lines = [line for line in output.splitlines() if line.startswith(f"│ {queue} ")]
    return [[cell.strip() for cell in line.strip("│").split("│")] for line in lines]


def test_stats_says_when_work_waits_and_no_worker_serves_its_queue(
    cli_env: Env, store: SqsJobStore
) -> None:
    """What an operator saw with no worker running: 5 queued, waiting for over 5 minutes,
    a dead letter; now each is said in words, with what to do."""
    earlier = SyncJobQueue(store, clock=lambda: time.time() - 316)
    for n in range(5):
        earlier.enqueue("report.build", {"n": n})
    sqs = boto3.client("sqs", endpoint_url=cli_env["AWS_ENDPOINT_URL"])
    try:
        sqs.send_message(QueueUrl=store.dead_letter_queue_urls["default"], MessageBody="{}")
    finally:
        sqs.close()

    result = invoke(cli_env, "stats")
    assert result.exit_code == 0, result.output
    _, (queue, workers, last_claim, oldest) = rows(result.stdout, "default")
    assert (queue, workers, last_claim) == ("default", "0", "never")
    assert oldest.startswith("5m 1"), oldest
    reasons = [line for line in result.stdout.splitlines() if line.startswith("! ")]
    assert reasons == [
        "! 5 jobs wait and no worker serves queue default: start one, or check the workers' logs",
        f"! The oldest job of queue default has waited {oldest}, more than 3m 00s: add workers, "
        "or look for stuck ones",
        "! 1 message in the dead-letter queue of default: see `sqsjobs dlq list`, then fix and "
        "redrive",
    ]
    dead = invoke(cli_env, "dlq", "list")  # where it sends the operator: no dead job, but
    assert dead.exit_code == 0, dead.output  # the message counted, and how to see it
    assert "Dead-letter queue of default: 1 message(s)\n  1 of them not a recorded" in dead.stdout
    assert "`sqsjobs dlq list --peek` shows them" in " ".join(dead.stdout.split())
    assert "0 workers alive: none wrote its presence record in the last 90 s" in result.stdout

    (document,) = json.loads(invoke(cli_env, "stats", "--json").stdout)
    assert (document["workers"], document["last_claim_at"], document["served_names"]) == (
        0,
        None,
        [],
    )
    assert document["waiting_names"] == {"report.build": 5}
    assert document["unserved_names"] == {"report.build": 5}  # said once, by the first reason
    assert [reason[:22] for reason in document["attention"]] == [
        "5 jobs wait and no wor",
        "The oldest job of queu",
        "1 message in the dead-",
    ]


def test_stats_names_a_waiting_job_name_no_alive_worker_serves(
    cli_env: Env, store: SqsJobStore
) -> None:
    now = time.time()
    store.sync.put_presence(
        WorkerPresence(
            worker_id="worker-7f3a",
            host="ip-10-0-3-17",
            pid=4242,
            version="0.3.0",
            queues=("default",),
            names=("report.build",),
            concurrency=4,
            running=0,
            started_at=utc(now - 600),
            heartbeat_at=utc(now - 3),
            expires_at=utc(now - 3 + PRESENCE_TTL),
            last_claims={"default": utc(now - 12)},
        )
    )
    producer = SyncJobQueue(store)
    producer.enqueue("report.build", {"month": "2031-02"}, delay=600)
    for n in range(3):
        producer.enqueue("report.buld", {"month": f"2031-0{n + 1}"}, delay=600)

    result = invoke(cli_env, "stats")
    assert result.exit_code == 0, result.output
    _, served = rows(result.stdout, "default")
    assert served[:2] == ["default", "1"] and served[3] == "-"
    assert re.fullmatch(r"1[2-9]s ago", served[2]), served  # the claim 12 s before
    reasons = [line for line in result.stdout.splitlines() if line.startswith("! ")]
    assert reasons == ["! report.buld: 3 waiting in queue default, no worker serves it"]
    (document,) = json.loads(invoke(cli_env, "stats", "--json").stdout)
    assert document["unserved_names"] == {"report.buld": 3}
    assert document["waiting_names"] == {"report.build": 1, "report.buld": 3}
