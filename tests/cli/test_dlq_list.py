"""``sqsjobs dlq list``: the dead jobs from their records, the DLQ left as it was.

Every receive raises a message's ``ApproximateReceiveCount``, which operators read as
deliveries; so ``dlq list`` receives nothing and ``dlq list --peek``, which must, says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from sqsjobs import JobContext, JobFatalError, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore

from .conftest import Env, invoke
from .test_dlq import dead_job, rows

ROW = re.compile(
    r"^│ (?P<id>[0-9a-f]{32}) +│ (?P<queue>\S+) +│ (?P<name>\S+) +│ (?P<attempts>[\d/]+) +│"
    r" (?P<died>[\d-]+ [\d:]+) +│ (?P<error>[^│]*?) +│$"
)
UNRECORDED = "of them not a recorded dead job"


@pytest.fixture
def sqs(aws_endpoint: str) -> Iterator[Any]:
    client = boto3.client("sqs", endpoint_url=aws_endpoint)
    yield client
    client.close()


def dead_rows(output: str) -> list[dict[str, str]]:
    return [m.groupdict() for line in output.splitlines() if (m := ROW.match(line))]


def refuse(ctx: JobContext) -> None:
    raise JobFatalError(f"refused {ctx.job.payload['n']}")


async def dead_jobs(store: SqsJobStore, *names: str) -> list[str]:
    """A dead job of each handler in ``names``, in that order: their ids, oldest first."""
    queue = JobQueue(store)
    try:
        ids = [(await queue.enqueue(name, {"n": n})).job.id for n, name in enumerate(names)]
        worker = JobWorker(queue, dict.fromkeys(names, refuse))
        for _ in names:
            assert await worker.run_once()
    finally:
        await store.aclose()
    return ids


def receive_counts(sqs: Any, url: str, expected: int) -> dict[str, int]:
    """Each message's receive count, by one receive of all of them (``expected``, at most
    10), handed back at once: the look raises each count by one."""
    reply = sqs.receive_message(
        QueueUrl=url,
        MaxNumberOfMessages=10,
        AttributeNames=["ApproximateReceiveCount"],
        VisibilityTimeout=30,
        WaitTimeSeconds=1,
    )
    messages = reply.get("Messages", [])
    assert len(messages) == expected, messages
    sqs.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[
            {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
            for n, m in enumerate(messages)
        ],
    )
    return {m["MessageId"]: int(m["Attributes"]["ApproximateReceiveCount"]) for m in messages}


async def test_listing_three_times_leaves_every_receive_count_as_it_was(
    cli_env: Env, store: SqsJobStore, sqs: Any
) -> None:
    await dead_jobs(store, "order.ship", "invoice.charge")
    url = store.dead_letter_queue_urls["default"]
    sqs.send_message(QueueUrl=url, MessageBody="hello")
    before = receive_counts(sqs, url, 3)

    for _ in range(3):
        result = invoke(cli_env, "dlq", "list")
        assert result.exit_code == 0, result.output
        assert result.stderr == ""

    # Only this second look of ours counts: a listing that received them adds 3 more.
    after = receive_counts(sqs, url, 3)
    assert after == {message_id: count + 1 for message_id, count in before.items()}


async def test_the_listing_shows_the_dead_jobs_from_their_records(
    cli_env: Env, store: SqsJobStore
) -> None:
    first, second, third = await dead_jobs(store, "order.ship", "invoice.charge", "order.ship")

    result = invoke(cli_env, "dlq", "list")
    assert result.exit_code == 0, result.output
    assert (
        result.stdout.split("\n", 1)[0].rstrip() == "Jobs (dead) in every queue, newest first (3)"
    )
    header = next(line for line in result.stdout.splitlines() if line.startswith("┃ id"))
    assert re.match(r"┃ id +┃ queue +┃ name +┃ attempts +┃ died \(UTC\) +┃ last_error +┃$", header)
    listed = dead_rows(result.stdout)
    assert [row["id"] for row in listed] == [third, second, first]  # newest first
    assert [row["name"] for row in listed] == ["order.ship", "invoice.charge", "order.ship"]
    assert {(row["queue"], row["attempts"]) for row in listed} == {("default", "1/5")}
    assert listed[0]["error"] == "JobFatalError: refused 2"
    assert "Dead-letter queue of default: 3 message(s)\n" in result.stdout
    assert UNRECORDED not in result.stdout

    named = invoke(cli_env, "dlq", "list", "--name", "order.ship", "--queue", "default")
    assert named.exit_code == 0, named.output
    assert named.stdout.startswith("Jobs (dead) named order.ship in queue default, newest first")
    assert [row["id"] for row in dead_rows(named.stdout)] == [third, first]
    assert "Dead-letter queue of default: 3 message(s), of every handler's jobs" in named.stdout

    one = invoke(cli_env, "dlq", "list", "--limit", "1")
    assert one.exit_code == 0, one.output
    assert [row["id"] for row in dead_rows(one.stdout)] == [third]
    assert "Showing the newest 1; raise --limit (up to 1000)" in one.stdout
    assert UNRECORDED not in one.stdout  # 2 more messages, but 2 more dead jobs unlisted


async def test_messages_that_are_no_recorded_dead_job_are_counted_and_peek_named(
    cli_env: Env, store: SqsJobStore, sqs: Any
) -> None:
    [job_id] = await dead_jobs(store, "order.ship")
    sqs.send_message(QueueUrl=store.dead_letter_queue_urls["default"], MessageBody="hello")

    result = invoke(cli_env, "dlq", "list")
    assert result.exit_code == 0, result.output
    assert [row["id"] for row in dead_rows(result.stdout)] == [job_id]
    said = " ".join(result.stdout.split("Dead-letter queue of default: ", 1)[1].split())
    assert said == (
        "2 message(s) 1 of them not a recorded dead job: a run that kept dying before it "
        "could record anything, moved there by the queue's redrive policy (the reconciler "
        "records it dead on its next pass), or a message that is not a job. `sqsjobs dlq "
        "list --peek` shows them, raising each one's receive count by one."
    )


async def test_peek_shows_the_messages_and_warns_that_it_raises_their_counts(
    cli_env: Env, store: SqsJobStore, sqs: Any
) -> None:
    job_id = await dead_job(store)
    sqs.send_message(QueueUrl=store.dead_letter_queue_urls["default"], MessageBody="hello")

    for look in (1, 2):
        result = invoke(cli_env, "dlq", "list", "--peek")
        assert result.exit_code == 0, result.output
        assert result.stderr == (
            "Peeking receives each dead-letter message: SQS counts every receive, so each "
            "message's receive count goes up by one.\n"
        )
        assert "Dead letters of every queue (2)" in result.stdout
        found = {row["job"][:7]: row for row in rows(result.stdout)}
        assert found[job_id[:7]]["receives"] == found["message"]["receives"] == str(look)


async def test_json_from_the_records_keeps_the_keys_with_nulls_for_the_message(
    cli_env: Env, store: SqsJobStore, sqs: Any
) -> None:
    [job_id] = await dead_jobs(store, "order.ship")
    sqs.send_message(QueueUrl=store.dead_letter_queue_urls["default"], MessageBody="hello")

    result = invoke(cli_env, "dlq", "list", "--json")
    assert result.exit_code == 0, result.output
    [letter] = json.loads(result.stdout)
    assert {key: value for key, value in letter.items() if key != "job"} == {
        "queue": "default",
        "message_id": None,
        "job_id": job_id,
        "receive_count": None,
        "sent_at": None,
    }
    assert (letter["job"]["id"], letter["job"]["status"]) == (job_id, "dead")

    peeked = invoke(cli_env, "dlq", "list", "--json", "--peek")
    assert peeked.exit_code == 0, peeked.output
    assert peeked.stderr.startswith("Peeking receives each dead-letter message")
    letters = json.loads(peeked.stdout)
    assert len(letters) == 2 and all(set(each) == set(letter) for each in letters)
    by_job = {each["job_id"]: each for each in letters}
    assert by_job[job_id]["receive_count"] == by_job[None]["receive_count"] == 1
    assert by_job[None]["job"] is None and by_job[None]["message_id"]
