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

from rich.console import Console

from ..aws import DeadLetter, SqsJobStore
from ._emulator import demo_stack_name, emulated_aws
from ._infra import deploy_with_progress


@dataclass(frozen=True)
class DemoStack:
    name: str
    endpoint_url: str
    store: SqsJobStore

    def dead_letter_depths(self) -> dict[str, int]:
        """Messages waiting in each queue's DLQ, as SQS counts them."""
        depths = {found.queue: found.dead_letter_messages for found in self.store.sync.stats()}
        return {queue: depth for queue, depth in depths.items() if depth is not None}

    def dead_letters(self) -> list[DeadLetter]:
        """What the DLQs hold, each message with its job; nothing is removed."""
        return self.store.sync.dead_letters()


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
