"""``stats``: per queue, how many jobs are in each status, and what SQS holds.

Counts come from the list index (see ``wire.items``): a queue's jobs in one status are a key
range of each of that status's ``layout.index_shards`` partitions, so a queue costs one
``Query(Select=COUNT)`` per (status, shard), all sent at once, plus a page more wherever
a range holds over 1 MB of items. Terminal records past their retention are still in
the table until TTL deletes them (up to days late); a filter leaves them out, as every
reader does. Waiting and running records never carry an expiry, so their ranges need
no filter. A ``COUNT`` query still reads every item it counts, so the cost grows with
the records kept, completed ones included.

The depths are SQS's approximate counts (``GetQueueAttributes``): visible, in flight
(received, not yet deleted), delayed, and visible in the dead-letter queue.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from ..._lifecycle import TERMINAL
from ..._models import JobStatus
from ..wire import index_reads, sqs
from ..wire.conditions import UNEXPIRED
from ..wire.items import index_pk, number
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Call, Flow, Parallel, Reply

VISIBLE: Final = "ApproximateNumberOfMessages"
IN_FLIGHT: Final = "ApproximateNumberOfMessagesNotVisible"
DELAYED_MESSAGES: Final = "ApproximateNumberOfMessagesDelayed"
DEPTHS: Final = (VISIBLE, IN_FLIGHT, DELAYED_MESSAGES)


@dataclass(frozen=True)
class QueueStats:
    """One queue: its jobs by status (every status, zeros too) and its SQS depths."""

    queue: str
    counts: Mapping[JobStatus, int]
    messages: int  # visible now
    in_flight: int  # received and neither deleted nor visible again yet
    delayed: int  # sent with a delay that has not yet passed
    dead_letter_messages: int | None  # visible in its DLQ; None: the queue has none


@dataclass(frozen=True)
class _Range:
    queue: str
    status: JobStatus
    shard: int
    start: Mapping[str, Any] | None = None


def stats(layout: Layout, queues: Sequence[str], now: float) -> Flow[list[QueueStats]]:
    """Count first, then read every queue's and DLQ's depths at once."""
    counts = yield from _count(layout, queues, now)
    calls: list[Call] = []
    for queue in queues:
        info = layout.info(queue)
        calls.append(sqs.queue_attributes(info.url, DEPTHS))
        if info.dead_letter_url is not None:
            calls.append(sqs.queue_attributes(info.dead_letter_url, [VISIBLE]))
    replies = iter(_checked((yield Parallel(tuple(calls)))))
    found: list[QueueStats] = []
    for queue in queues:
        depth = _attributes(next(replies))
        dead_letters = None
        if layout.info(queue).dead_letter_url is not None:
            dead_letters = _attributes(next(replies))[VISIBLE]
        found.append(
            QueueStats(
                queue=queue,
                counts=MappingProxyType(counts[queue]),
                messages=depth[VISIBLE],
                in_flight=depth[IN_FLIGHT],
                delayed=depth[DELAYED_MESSAGES],
                dead_letter_messages=dead_letters,
            )
        )
    return found


def _count(
    layout: Layout, queues: Sequence[str], now: float
) -> Flow[dict[str, dict[JobStatus, int]]]:
    """Every (queue, status, shard) range counted at once, then further pages as needed."""
    counts = {queue: dict.fromkeys(JobStatus, 0) for queue in queues}
    pending = [
        _Range(q, status, n)
        for q in queues
        for status in JobStatus
        for n in range(layout.index_shards)
    ]
    while pending:
        replies = _checked((yield Parallel(tuple(_page(layout.table, r, now) for r in pending))))
        more: list[_Range] = []
        for range_, reply in zip(pending, replies, strict=True):
            counts[range_.queue][range_.status] += int(reply.get("Count", 0))
            start = reply.get("LastEvaluatedKey")
            if start is not None:
                more.append(_Range(range_.queue, range_.status, range_.shard, start))
        pending = more
    return counts


def _page(table: str, range_: _Range, now: float) -> Call:
    partition = index_pk(range_.status, range_.shard)
    low, high = f"{range_.queue}#", f"{range_.queue}$"  # "$" sorts just after "#"
    if range_.status not in TERMINAL:
        return index_reads.count_index(table, partition, low, high, start=range_.start)
    return index_reads.count_index(
        table,
        partition,
        low,
        high,
        start=range_.start,
        filter=UNEXPIRED,
        values={":now": number(now)},
    )


def _checked(replies: list[Reply | AwsError]) -> list[Reply]:
    """The replies of a ``Parallel``; the first failure among them is raised."""
    for reply in replies:
        if isinstance(reply, AwsError):
            raise reply
    return [reply for reply in replies if not isinstance(reply, AwsError)]


def _attributes(reply: Reply) -> dict[str, int]:
    attributes = reply.get("Attributes", {})
    return {name: int(attributes.get(name, "0")) for name in DEPTHS}
