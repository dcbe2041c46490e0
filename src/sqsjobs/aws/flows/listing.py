"""``list``: a k-way merge over the list index's partitions, oldest first.

Each (status, shard) partition is a DynamoDB partition of the ``by_status`` index, and
each queue a key range in it (see ``wire.items``). A page queries every (queue, status,
shard) range the filter allows, all at once, and merges them on ``(created_at, id)``,
fetching a range's next page only when its buffer runs dry before the merge is done.

The cursor is a keyset position, ``(created_at, id)`` of the last job returned, the
same as the memory store's: every range resumes just after it, so a job that changes
status between pages is neither repeated nor the cause of a skip of others. DynamoDB
applies ``Limit`` before ``FilterExpression``, so a range may return fewer items than
asked with more to come; that is why ranges refill on demand.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._cursor import decode_cursor, encode_cursor
from ..._models import Job, JobStatus
from ..._requests import JobFilter, JobPage
from ..._validation import page_limit
from ..wire import index_reads
from ..wire.conditions import UNEXPIRED
from ..wire.items import index_pk, index_sk, number, stored_from_item, text
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Call, Flow, Parallel


@dataclass
class _Range:
    partition: str
    low: str
    high: str
    start: Mapping[str, Any] | None = None
    exhausted: bool = False
    buffer: deque[tuple[tuple[float, str], Job]] = field(default_factory=deque)

    @property
    def needs_page(self) -> bool:
        return not self.buffer and not self.exhausted


def list_jobs(
    layout: Layout, filter: JobFilter, limit: int, cursor: str | None, now: float
) -> Flow[JobPage]:
    limit = page_limit(limit)
    after = None if cursor is None else decode_cursor(cursor)
    ranges = _ranges(layout, filter, after)
    expression, values = _filter(filter, now)
    taken: list[Job] = []
    while len(taken) <= limit:
        hungry = [r for r in ranges if r.needs_page]
        if hungry:
            calls = tuple(_page(layout.table, r, limit + 1, expression, values) for r in hungry)
            replies = yield Parallel(calls)
            for each, reply in zip(hungry, replies, strict=True):
                _fill(each, reply, after, now)
            continue
        heads = [r for r in ranges if r.buffer]
        if not heads:
            break
        taken.append(min(heads, key=lambda r: r.buffer[0][0]).buffer.popleft()[1])
    more = len(taken) > limit
    last = taken[limit - 1] if more else None
    next_cursor = None if last is None else encode_cursor(last.created_at.timestamp(), last.id)
    return JobPage(jobs=taken[:limit], next_cursor=next_cursor)


def _ranges(layout: Layout, filter: JobFilter, after: tuple[float, str] | None) -> list[_Range]:
    queues = [filter.queue] if filter.queue is not None else sorted(layout.queue_urls)
    statuses = sorted(filter.statuses) if filter.statuses is not None else list(JobStatus)
    return [
        _Range(
            index_pk(status, shard),
            f"{queue}#" if after is None else index_sk(queue, *after),
            f"{queue}$",  # "$" sorts just after "#": the end of this queue's keys
        )
        for queue in queues
        for status in statuses
        for shard in range(layout.index_shards)
    ]


def _filter(filter: JobFilter, now: float) -> tuple[str, dict[str, Any]]:
    """Expired records are absent to readers, whether or not TTL has deleted them yet."""
    clauses = [UNEXPIRED]
    values: dict[str, Any] = {":now": number(now)}
    if filter.name is not None:
        clauses.append("#name = :name")
        values[":name"] = text(filter.name)
    if filter.tenant is not None:
        clauses.append("#tenant = :tenant")
        values[":tenant"] = text(filter.tenant)
    return " AND ".join(clauses), values


def _page(table: str, range_: _Range, limit: int, expression: str, values: dict[str, Any]) -> Call:
    return index_reads.query_index(
        table,
        range_.partition,
        range_.low,
        range_.high,
        limit=limit,
        start=range_.start,
        filter=expression,
        values=values,
    )


def _fill(range_: _Range, reply: Any, after: tuple[float, str] | None, now: float) -> None:
    if isinstance(reply, AwsError):
        raise reply
    for item in reply.get("Items", []):
        stored = stored_from_item(item)
        key = (stored.job.created_at.timestamp(), stored.job.id)
        if (after is None or key > after) and not stored.expired(now):
            range_.buffer.append((key, stored.job))
    range_.start = reply.get("LastEvaluatedKey")
    range_.exhausted = range_.start is None
