"""``sqsjobs stats``: one aligned row per queue, exact counts by status and SQS depths."""

from __future__ import annotations

import re
import time

from sqsjobs import JobContext, JobFatalError, JobQueue, JobWorker, SyncJobQueue
from sqsjobs.aws import SqsJobStore

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
