"""``stats``: per queue, how many jobs are in each status, and what SQS holds.

Counts come from the list indexes (see ``wire.items``), at a cost that follows what is
open, not what is kept. A queue's open partitions (``layout.index_shards`` of them) are
read whole, all at once, page after page: their entries say only that a job has not
ended, so the records are read (``BatchGetItem``, about half a read unit each) to count
them as queued, delayed or running. Ended jobs are counted over a recent window, those
created in the last ``ENDED_WINDOW`` seconds (``QueueStats.ended_since``): of each
terminal status's partitions only that key range is read (``Query(Select=COUNT)``,
entries of about 150 bytes, so one read unit counts some 50 of them). Counting every
kept record would read the table's whole history on every call. Records that ended
under record format 2 are still in their open partition, read anyway, and counted by
their phase if they are in the window. While the table has the previous layout's
``by_status``, each (status, shard) range of it is counted too, terminal ones over the
window. Terminal records past their retention are still in the table until TTL deletes
them (up to days late); a filter leaves them out, as every reader does.

The depths are SQS's approximate counts (``GetQueueAttributes``): visible, in flight
(received, not yet deleted), delayed, and visible in the dead-letter queue.

Who serves each queue comes from the workers' presence records (``flows.presence``: one
``Query`` of the index's presence partition and a ``BatchGetItem``, whatever the table
keeps). The names of the jobs not started yet, and when the queued job due first became
due, come from the open records read for the counts, at no extra read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Final

from ...core.lifecycle import CLAIMABLE_LATER, TERMINAL
from ...core.models import JobStatus
from ...core.presence import last_claim, served_names, serving
from ...core.reports import QueueStats
from ...core.times import utc, utc_or_none
from ..wire import index_reads, sqs
from ..wire.conditions import UNEXPIRED
from ..wire.index_keys import OPEN, ended_list_pk, index_pk, list_pk, list_sk
from ..wire.index_reads import CURRENT, FIRST_KEY, LAST_KEY, PREVIOUS
from ..wire.items import Stored, number
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Call, Flow, Parallel, Reply
from .indexes import job_id_of, records
from .presence import presences

VISIBLE: Final = "ApproximateNumberOfMessages"
IN_FLIGHT: Final = "ApproximateNumberOfMessagesNotVisible"
DELAYED_MESSAGES: Final = "ApproximateNumberOfMessagesDelayed"
DEPTHS: Final = (VISIBLE, IN_FLIGHT, DELAYED_MESSAGES)


ENDED_WINDOW: Final = 3600.0  # ended jobs are counted if created this recently
NOT_STARTED: Final = CLAIMABLE_LATER  # what a worker serving the job's name would run


@dataclass
class _Waiting:
    """Per queue, what the open records say of the jobs not started yet."""

    names: Counter[str]
    oldest_due: float | None = None  # the earliest ``run_at`` of a queued job


@dataclass(frozen=True)
class _Range:
    queue: str
    status: JobStatus | None  # of a range of one status; an open partition holds several
    shard: int
    partition: str
    start: Mapping[str, Any] | None = None


def stats(layout: Layout, queues: Sequence[str], now: float) -> Flow[list[QueueStats]]:
    """Count first, then read every queue's and DLQ's depths at once."""
    since = now - ENDED_WINDOW
    waiting = {queue: _Waiting(Counter()) for queue in queues}
    counts = yield from _count(layout, queues, now, since, waiting)
    alive = yield from presences(layout.table, now)
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
                ended_since=utc(since),
                workers=len(serving(alive, queue)),
                last_claim_at=last_claim(alive, queue),
                served_names=served_names(alive, queue),
                waiting_names=dict(waiting[queue].names),
                oldest_queued_at=utc_or_none(waiting[queue].oldest_due),
            )
        )
    return found


def _count(
    layout: Layout, queues: Sequence[str], now: float, since: float, waiting: dict[str, _Waiting]
) -> Flow[dict[str, dict[JobStatus, int]]]:
    """Every index's counts, added: a record is in one partition of one index, never two
    (one moving between partitions may be counted in both, or neither, for a moment)."""
    counts = {queue: dict.fromkeys(JobStatus, 0) for queue in queues}
    open_ids = yield from _count_open(layout, queues, now, since, counts)
    every = [job_id for job_ids in open_ids.values() for job_id in job_ids]
    found = (yield from records(layout.table, every, payloads=False)) if every else {}
    for stored in found.values():
        # An open entry's record may have ended all the same: finished by a 0.1 worker
        # (which writes no ``phase``), or dead with its DLQ copy still owed.
        if not stored.past_retention(now):
            counts[stored.job.queue][stored.job.status] += 1
            _note_waiting(waiting[stored.job.queue], stored)
    ended = [
        _Range(q, status, n, ended_list_pk(q, n, status))
        for q in queues
        for status in sorted(TERMINAL)
        for n in range(layout.index_shards)
    ]
    yield from _count_ranges(layout, ended, now, since, counts, _ended_page)
    if layout.previous_index:
        previous = [
            _Range(q, status, n, index_pk(status, n))
            for q in queues
            for status in JobStatus
            if status is not JobStatus.WAITING  # written under record format 3 only
            for n in range(layout.index_shards)
        ]
        yield from _count_ranges(layout, previous, now, since, counts, _previous_page)
    return counts


def _note_waiting(waiting: _Waiting, stored: Stored) -> None:
    job = stored.job
    if job.status in NOT_STARTED:
        waiting.names[job.name] += 1
    if job.status is JobStatus.QUEUED:
        due = stored.run_at
        waiting.oldest_due = due if waiting.oldest_due is None else min(waiting.oldest_due, due)


def _count_open(
    layout: Layout,
    queues: Sequence[str],
    now: float,
    since: float,
    counts: dict[str, dict[JobStatus, int]],
) -> Flow[dict[str, list[str]]]:
    """The ids of open jobs, whose status only records know; jobs that ended under
    record format 2, still here, counted by phase if created since ``since``."""
    open_ids: dict[str, list[str]] = {queue: [] for queue in queues}
    recent = list_sk(since, "")
    pending = [
        _Range(q, None, n, list_pk(q, n)) for q in queues for n in range(layout.index_shards)
    ]
    while pending:
        calls = tuple(_open_page(layout.table, r, now) for r in pending)
        replies = _checked((yield Parallel(calls)))
        more: list[_Range] = []
        for range_, reply in zip(pending, replies, strict=True):
            for item in reply.get("Items", []):
                phase = str(item["phase"]["S"])
                if phase == OPEN:
                    open_ids[range_.queue].append(job_id_of(item))
                elif str(item["list_sk"]["S"]) >= recent:
                    counts[range_.queue][JobStatus(phase)] += 1
            start = reply.get("LastEvaluatedKey")
            if start is not None:
                more.append(replace(range_, start=start))
        pending = more
    return open_ids


def _open_page(table: str, range_: _Range, now: float) -> Call:
    return index_reads.query_index(
        table,
        CURRENT,
        range_.partition,
        FIRST_KEY,
        LAST_KEY,
        limit=None,
        start=range_.start,
        filter=UNEXPIRED,
        values={":now": number(now)},
    )


def _count_ranges(
    layout: Layout,
    pending: list[_Range],
    now: float,
    since: float,
    counts: dict[str, dict[JobStatus, int]],
    page: Callable[[str, _Range, float, float], Call],
) -> Flow[None]:
    """Count ranges of one status each, all at once, then their further pages."""
    while pending:
        calls = tuple(page(layout.table, r, now, since) for r in pending)
        replies = _checked((yield Parallel(calls)))
        more: list[_Range] = []
        for range_, reply in zip(pending, replies, strict=True):
            assert range_.status is not None
            counts[range_.queue][range_.status] += int(reply.get("Count", 0))
            start = reply.get("LastEvaluatedKey")
            if start is not None:
                more.append(replace(range_, start=start))
        pending = more


def _ended_page(table: str, range_: _Range, now: float, since: float) -> Call:
    """The entries of one terminal status's partition created since ``since``."""
    return index_reads.count_index(
        table,
        CURRENT,
        range_.partition,
        list_sk(since, ""),
        LAST_KEY,
        start=range_.start,
        filter=UNEXPIRED,
        values={":now": number(now)},
    )


def _previous_page(table: str, range_: _Range, now: float, since: float) -> Call:
    assert range_.status is not None
    high = f"{range_.queue}$"  # "$" sorts just after "#"
    if range_.status not in TERMINAL:
        low = f"{range_.queue}#"
        return index_reads.count_index(
            table, PREVIOUS, range_.partition, low, high, start=range_.start
        )
    return index_reads.count_index(
        table,
        PREVIOUS,
        range_.partition,
        f"{range_.queue}#{list_sk(since, '')}",
        high,
        start=range_.start,
        filter=UNEXPIRED,
        values={":now": number(now)},
    )


def dead_letter_depths(layout: Layout, queues: Sequence[str]) -> Flow[dict[str, int]]:
    """Messages visible in each queue's DLQ, as SQS counts them; queues without one left
    out. One ``GetQueueAttributes`` per DLQ, all at once, and nothing of the table."""
    asked = [(q, url) for q in queues if (url := layout.info(q).dead_letter_url) is not None]
    if not asked:
        return {}
    calls = tuple(sqs.queue_attributes(url, [VISIBLE]) for _, url in asked)
    replies = _checked((yield Parallel(calls)))
    return {q: _attributes(reply)[VISIBLE] for (q, _), reply in zip(asked, replies, strict=True)}


def _checked(replies: list[Reply | AwsError]) -> list[Reply]:
    """The replies of a ``Parallel``; the first failure among them is raised."""
    for reply in replies:
        if isinstance(reply, AwsError):
            raise reply
    return [reply for reply in replies if not isinstance(reply, AwsError)]


def _attributes(reply: Reply) -> dict[str, int]:
    attributes = reply.get("Attributes", {})
    return {name: int(attributes.get(name, "0")) for name in DEPTHS}
