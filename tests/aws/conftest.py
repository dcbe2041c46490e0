"""Fixtures for the AWS store tests: the shared emulator and a fresh store per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import boto3
import pytest

from sqsjobs import JobQueue
from sqsjobs.aws import SqsJobStore

from .emulator import shared_endpoint, unique_prefix

QUEUES = ("default", "other")
# How far the stores in these tests let clocks disagree before a claim takes over a lease.
# Real time, and a margin smaller than the default 2 s, so lease tests wait less; the
# margin itself is tested with the default in test_clock_skew.py.
SKEW = 0.1
# Long polls of a second, not 20: a worker's stop waits out its last long poll (whatever
# SQS hands that poll goes back to the queue), so each test's stop costs a second at most.
WAIT = 1.0


@pytest.fixture(scope="session")
def aws_endpoint(pytestconfig: pytest.Config) -> str:
    return shared_endpoint(pytestconfig)


@pytest.fixture
def prefix() -> str:
    return unique_prefix()


@pytest.fixture
async def store(aws_endpoint: str, prefix: str) -> AsyncIterator[SqsJobStore]:
    made = SqsJobStore.create(
        prefix,
        queues=QUEUES,
        max_receive_count=5,
        endpoint_url=aws_endpoint,
        clock_skew=SKEW,
        wait_time=WAIT,
    )
    try:
        yield made
    finally:
        await made.aclose()


@pytest.fixture
def dynamodb(aws_endpoint: str) -> Iterator[Any]:
    """A plain boto3 DynamoDB client, to read and write items as they are stored."""
    client = boto3.client("dynamodb", endpoint_url=aws_endpoint)
    yield client
    client.close()


async def all_ids(jobs: JobQueue, limit: int = 50, **filters: Any) -> list[str]:
    """Every job ``list`` returns for ``filters``, page after page, in order."""
    ids: list[str] = []
    cursor = None
    while True:
        page = await jobs.list(limit=limit, cursor=cursor, **filters)
        ids += [job.id for job in page.jobs]
        if page.next_cursor is None:
            return ids
        cursor = page.next_cursor


@pytest.fixture
def sqs(aws_endpoint: str) -> Iterator[Any]:
    """A plain boto3 SQS client, to play the part of SQS misbehaving or a foreign producer."""
    client = boto3.client("sqs", endpoint_url=aws_endpoint)
    yield client
    client.close()


def depth(sqs: Any, url: str) -> int:
    """Messages in a queue, visible or not (moto counts exactly)."""
    names = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return sum(int(attributes[name]) for name in names)


# A claim with messages in hand reads the fleet's paused queues once its copy is older
# than ``store.pauses.FRESH`` (5 s of real time); a count that must be fixed by the steps
# alone trusts the first read for an hour instead. ``PAUSE_READS`` is then what it costs.
PAUSE_READS = {("dynamodb", "GetItem"): 1}


@pytest.fixture
def one_pause_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from sqsjobs.aws.store import pauses

    monkeypatch.setattr(pauses, "FRESH", 3600.0)
