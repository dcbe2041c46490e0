"""FIFO queues: a receive hands out at most one message per group to claim.

SQS keeps a FIFO group locked while any of its messages is in flight, but one receive
may return several messages of the same group, in order. Claiming all of them would run
two jobs of one group at once (and finish them out of order), so a worker's receive on a
FIFO queue keeps the first message of each group and makes the others visible again at
once (one ``ChangeMessageVisibilityBatch``). The group stays locked by the kept message
until its job is settled (deleted, hidden until a retry, moved to the DLQ, or released),
and the next receive of the group starts from the message after it: jobs of one group
run one at a time, in enqueue order, on every worker.

The price: a message handed back this way has spent a receive, which counts towards the
redrive policy's ``maxReceiveCount``. A worker asks for no more messages than it has free
slots, so a message is handed back at most once per earlier job of its group that it was
received beside; keep ``maxReceiveCount`` above the worker's concurrency (the templates'
default 10, with at most 10 per receive, leaves the kept message its run).

Held messages (``store/held_messages``) are a standard queue's optimisation; a FIFO receive holds
nothing, since a held message would lock its group without running.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from ..wire.protocol import AwsError, Flow
from ..wire.sqs import Message
from .messages import hand_back, receive


def first_per_group(messages: Sequence[Message]) -> tuple[list[Message], list[Message]]:
    """The first message of each group (in receive order), and the ones behind them."""
    seen: set[str] = set()
    heads: list[Message] = []
    behind: list[Message] = []
    for message in messages:
        group = message.group if message.group is not None else message.message_id
        (behind if group in seen else heads).append(message)
        seen.add(group)
    return heads, behind


def receive_heads(url: str, limit: int, wait: int, visibility: int) -> Flow[list[Message]]:
    """Receive up to ``limit`` messages from a FIFO queue; hand back all but each group's first."""
    messages = yield from receive(url, limit, wait, visibility)
    heads, behind = first_per_group(messages)
    if behind:
        # If this fails, they come back at their visibility timeout, still behind the head.
        with contextlib.suppress(AwsError):
            yield from hand_back(url, behind)
    return heads
