"""Run in a base install (``pip install sqsjobs``): produce, then handle as Lambda would.

``test_wheel.py`` runs this file with a fresh environment's interpreter; argv[1] is JSON
naming the emulator and the store's resources. It prints one JSON object: what happened
and which of the extras' modules got imported (none should).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import boto3

from sqsjobs import JobQueue, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler

EXTRAS_MODULES = (
    "aiobotocore",
    "aiohttp",
    "click",
    "rich",
    "croniter",
    "moto",
)


class Context:
    """What the handler reads of Lambda's context object."""

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def sqs_event(sqs: Any, url: str) -> dict[str, Any]:
    """One received message as the record Lambda's SQS poller hands the function."""
    reply = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=1, WaitTimeSeconds=5, AttributeNames=["All"]
    )
    [message] = reply["Messages"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    record = {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": {},
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": arn["QueueArn"],
        "awsRegion": "us-east-1",
    }
    return {"Records": [record]}


def total(payload: dict[str, Any]) -> float:
    return round(sum(payload["lines"]), 2)


async def enqueue_async(store: SqsJobStore) -> str:
    """The async producer face, which in this install runs boto3 in threads."""
    queue = JobQueue(store).for_tenant("acme-7")
    result = await queue.enqueue("invoice.total", {"lines": [3.5]}, queue="reports")
    job = await queue.get(result.job.id)
    assert job is not None
    return job.status


def main(resources: dict[str, Any]) -> dict[str, Any]:
    store = SqsJobStore(
        table_name=resources["table"],
        queue_urls=resources["queues"],
        endpoint_url=resources["endpoint"],
    )
    queue = SyncJobQueue(store).for_tenant("acme-7")
    job = queue.enqueue("invoice.total", {"lines": [19.99, 5.01, 0.125], "currency": "€"}).job
    sqs = boto3.client("sqs", endpoint_url=resources["endpoint"])
    event = sqs_event(sqs, resources["queues"]["default"])
    handler = make_lambda_handler({"invoice.total": total}, store=store)
    reply = handler(event, Context())
    done = queue.get(job.id)
    assert done is not None
    async_store = SqsJobStore(
        table_name=resources["table"],
        queue_urls=resources["queues"],
        endpoint_url=resources["endpoint"],
    )
    async_status = asyncio.run(enqueue_async(async_store))
    sqs.close()
    store.close()
    async_store.close()
    return {
        "reply": reply,
        "status": done.status,
        "result": done.result,
        "async_status": async_status,
        "loaded": [name for name in EXTRAS_MODULES if name in sys.modules],
    }


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
