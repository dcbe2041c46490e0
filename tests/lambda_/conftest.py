"""Lambda tests: a store on the shared emulator, and SQS event records built from real messages."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from sqsjobs.aws import SqsJobStore

from ..aws.emulator import shared_endpoint, unique_prefix


@pytest.fixture(scope="session")
def aws_endpoint(pytestconfig: pytest.Config) -> str:
    return shared_endpoint(pytestconfig)


@pytest.fixture
def sqs(aws_endpoint: str) -> Iterator[Any]:
    client = boto3.client("sqs", endpoint_url=aws_endpoint)
    yield client
    client.close()


@pytest.fixture
def store(aws_endpoint: str) -> Iterator[SqsJobStore]:
    made = SqsJobStore.create(unique_prefix(), max_receive_count=5, endpoint_url=aws_endpoint)
    yield made
    made.close()


@pytest.fixture
def fifo_store(aws_endpoint: str) -> Iterator[SqsJobStore]:
    """The same on FIFO queues."""
    made = SqsJobStore.create(
        unique_prefix(), fifo=True, max_receive_count=5, endpoint_url=aws_endpoint
    )
    yield made
    made.close()


@dataclass
class Context:
    """What the handler reads of Lambda's context object."""

    remaining_ms: int = 60_000

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def receive_event(sqs: Any, url: str, count: int) -> dict[str, Any]:
    """Receive ``count`` messages as Lambda's poller would and wrap them as an SQS event."""
    messages: list[dict[str, Any]] = []
    while len(messages) < count:
        reply = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=min(10, count - len(messages)),
            WaitTimeSeconds=1,
            AttributeNames=["All"],
            VisibilityTimeout=30,
        )
        messages += reply.get("Messages", [])
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    return {"Records": [record(m, arn) for m in messages]}


def record(message: dict[str, Any], arn: str) -> dict[str, Any]:
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": {},
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": "us-east-1",
    }
