"""The demo's stack: the emulator started, ``infra/`` deployed into it, the store built.

This is the production path in miniature: CloudFormation makes the table, the queue and
its dead-letter queue from the shipped template, and ``SqsJobStore.from_stack`` reads
the stack's outputs, exactly as ``sqsjobs worker --stack`` does against AWS.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3  # type: ignore[import-untyped]
from rich.console import Console

from ..aws import SqsJobStore
from ._emulator import demo_stack_name, emulated_aws
from ._infra import deploy_with_progress


@dataclass(frozen=True)
class DemoStack:
    name: str
    endpoint_url: str
    store: SqsJobStore

    def dead_letter_depths(self) -> dict[str, int]:
        """Messages waiting in each queue's DLQ, as SQS counts them."""
        sqs = boto3.client("sqs", endpoint_url=self.endpoint_url)
        try:
            return {
                queue: int(
                    sqs.get_queue_attributes(
                        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
                    )["Attributes"]["ApproximateNumberOfMessages"]
                )
                for queue, url in self.store.dead_letter_queue_urls.items()
            }
        finally:
            sqs.close()


@contextmanager
def deployed_demo_stack(console: Console, **store_options: Any) -> Iterator[DemoStack]:
    """Start the emulator, deploy the stack, yield it with its store; stop it all after."""
    with emulated_aws() as endpoint:
        name = demo_stack_name()
        deploy_with_progress(console, name, endpoint_url=endpoint)
        store = SqsJobStore.from_stack(name, endpoint_url=endpoint, **store_options)
        try:
            yield DemoStack(name, endpoint, store)
        finally:
            store.close()
