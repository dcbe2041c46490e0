"""Pausing a queue fleet-wide: the control item's writes and read, and what a claim does
with messages of a queue it finds paused.

A worker stops receiving from a paused queue (``store.pauses``), so its messages wait
in SQS without a receive counted against ``maxReceiveCount``. Messages already in hand
when a claim learns of the pause, and every message a Lambda event source mapping
delivers while the queue is paused (a mapping keeps receiving), are held back instead
of claimed: hidden for ``held_for`` (a tenth of the time the queue has been paused,
between ``HOLD_MIN`` and ``HOLD_MAX``, so a long pause costs few receives and a short one
resumes quickly), or, once the next receive would leave less than half the redrive
budget, re-sent as a fresh message and the old one deleted (``sqs.plan_return``, as a
long delay hops). So a pause of any length dead-letters nothing and loses nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..wire import control
from ..wire.layout import Layout
from ..wire.protocol import Flow
from ..wire.sqs import Message, plan_return
from .messages import MessagePlan, carry_out

HOLD_MIN = 8.0  # seconds: a resume reaches held-back messages this soon after a short pause
HOLD_MAX = 300.0  # and within five minutes after a long one


def pause(layout: Layout, queue: str, now: float) -> Flow[Mapping[str, float]]:
    """Pause ``queue``; the paused queues as they now are."""
    layout.url(queue)  # a queue this store has, or JobConfigError before any write
    yield control.pause(layout.table, queue, now)
    return (yield from paused(layout))


def resume(layout: Layout, queue: str) -> Flow[Mapping[str, float]]:
    """Resume ``queue``; the paused queues as they now are."""
    layout.url(queue)
    yield control.resume(layout.table, queue)
    return (yield from paused(layout))


def paused(layout: Layout) -> Flow[Mapping[str, float]]:
    reply = yield control.read(layout.table)
    return control.paused_queues(reply.get("Item"))


def held_for(paused_since: float, now: float) -> float:
    """How long a held-back message stays hidden: it grows with the pause."""
    return min(HOLD_MAX, max(HOLD_MIN, (now - paused_since) / 10))


def hold_back(
    layout: Layout, queue: str, messages: Sequence[Message], paused_since: float, now: float
) -> Flow[None]:
    """Return the messages of a paused queue unclaimed, hidden or re-sent fresh."""
    info = layout.info(queue)
    due = now + held_for(paused_since, now)
    plan = MessagePlan()
    for message in messages:
        plan.return_at(message, plan_return(message, due, now, info, hop=True))
    yield from carry_out(plan, info)
