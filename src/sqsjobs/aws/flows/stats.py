"""``stats``: per queue, how many jobs are in each status, and what SQS holds.

Counts come from the list indexes (see ``wire.items``). ``by_queue`` gives a queue's ended
jobs by phase: its ``layout.index_shards`` partitions are read whole (index entries of
about 150 bytes, so one read unit counts some 50 of them, eventually consistent), all at
once, page after page. Its open entries say only that a job has not ended, so their
records are read (``BatchGetItem``, about half a read unit each) to count them as queued,
delayed or running. While the table has the previous layout's ``by_status``, each
(status, shard) range of it is counted too (``Query(Select=COUNT)``). Terminal records
past their retention are still in the table until TTL deletes them (up to days late);
a filter leaves them out, as every reader does. So the cost grows with the records
kept, completed ones included, and with the jobs waiting.

The depths are SQS's approximate counts (``GetQueueAttributes``): visible, in flight
(received, not yet deleted), delayed, and visible in the dead-letter queue.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from ...core.lifecycle import TERMINAL
from ...core.models import JobStatus
from ...core.reports import QueueStats
from ..wire import index_reads, sqs
from ..wire.conditions import UNEXPIRED
from ..wire.index_reads import CURRENT, FIRST_KEY, LAST_KEY, PREVIOUS
from ..wire.items import OPEN, index_pk, list_pk, number
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Call, Flow, Parallel, Reply
from .indexes import job_id_of, records

VISIBLE: Final = "ApproximateNumberOfMessages"
IN_FLIGHT: Final = "ApproximateNumberOfMessagesNotVisible"
DELAYED_MESSAGES: Final = "ApproximateNumberOfMessagesDelayed"
DEPTHS: Final = (VISIBLE, IN_FLIGHT, DELAYED_MESSAGES)


@dataclass(frozen=True)
class _Range:
    queue: str
    status: JobStatus | None  # of a ``by_status`` range; ``by_queue`` ranges hold all
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
    """Both indexes' counts, added: a record is in one of them, never in both."""
    counts = {queue: dict.fromkeys(JobStatus, 0) for queue in queues}
    open_ids = yield from _count_current(layout, queues, now, counts)
    every = [job_id for job_ids in open_ids.values() for job_id in job_ids]
    found = (yield from records(layout.table, every, payloads=False)) if every else {}
    for stored in found.values():
        # An open entry's record may have ended all the same: finished by a 0.1 worker
        # (which writes no ``phase``), or dead with its DLQ copy still owed.
        if not stored.expired(now):
            counts[stored.job.queue][stored.job.status] += 1
    if layout.previous_index:
        yield from _count_previous(layout, queues, now, counts)
    return counts


def _count_current(
    layout: Layout, queues: Sequence[str], now: float, counts: dict[str, dict[JobStatus, int]]
) -> Flow[dict[str, list[str]]]:
    """Count ended jobs by phase; the ids of open ones, whose status only records know."""
    open_ids: dict[str, list[str]] = {queue: [] for queue in queues}
    pending = [_Range(q, None, n) for q in queues for n in range(layout.index_shards)]
    while pending:
        calls = tuple(_current_page(layout.table, r, now) for r in pending)
        replies = _checked((yield Parallel(calls)))
        more: list[_Range] = []
        for range_, reply in zip(pending, replies, strict=True):
            for item in reply.get("Items", []):
                phase = str(item["phase"]["S"])
                if phase == OPEN:
                    open_ids[range_.queue].append(job_id_of(item))
                else:
                    counts[range_.queue][JobStatus(phase)] += 1
            start = reply.get("LastEvaluatedKey")
            if start is not None:
                more.append(_Range(range_.queue, None, range_.shard, start))
        pending = more
    return open_ids


def _current_page(table: str, range_: _Range, now: float) -> Call:
    return index_reads.query_index(
        table,
        CURRENT,
        list_pk(range_.queue, range_.shard),
        FIRST_KEY,
        LAST_KEY,
        limit=None,
        start=range_.start,
        filter=UNEXPIRED,
        values={":now": number(now)},
    )


def _count_previous(
    layout: Layout, queues: Sequence[str], now: float, counts: dict[str, dict[JobStatus, int]]
) -> Flow[None]:
    """Every (queue, status, shard) range of ``by_status`` counted at once, then more pages."""
    pending = [
        _Range(q, status, n)
        for q in queues
        for status in JobStatus
        for n in range(layout.index_shards)
    ]
    while pending:
        calls = tuple(_previous_page(layout.table, r, now) for r in pending)
        replies = _checked((yield Parallel(calls)))
        more: list[_Range] = []
        for range_, reply in zip(pending, replies, strict=True):
            assert range_.status is not None
            counts[range_.queue][range_.status] += int(reply.get("Count", 0))
            start = reply.get("LastEvaluatedKey")
            if start is not None:
                more.append(_Range(range_.queue, range_.status, range_.shard, start))
        pending = more


def _previous_page(table: str, range_: _Range, now: float) -> Call:
    assert range_.status is not None
    partition = index_pk(range_.status, range_.shard)
    low, high = f"{range_.queue}#", f"{range_.queue}$"  # "$" sorts just after "#"
    if range_.status not in TERMINAL:
        return index_reads.count_index(table, PREVIOUS, partition, low, high, start=range_.start)
    return index_reads.count_index(
        table,
        PREVIOUS,
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
