"""``list``: a k-way merge over the list indexes' partitions, oldest first.

Each queue's jobs are ``layout.index_shards`` partitions of the ``by_queue`` index (see
``wire.items``), and, while the table has it, a key range of each (status, shard)
partition of the previous layout's ``by_status``. A page queries every range the filter
allows, all at once, and merges them on ``list_sk`` order (``created_at``, then id),
fetching a range's next page only when its buffer runs dry before the merge is done.

``by_queue`` knows a job's phase (open, or how it ended), its name, tenant and expiry,
but not its status: candidates from it are checked against their records, fetched with
``BatchGetItem`` a page at a time, and only those whose status the filter allows are
kept. So a list of waiting jobs reads the records of the running ones in between, and
one of a terminal status reads only its own. ``by_status`` projects whole records and
needs no fetch.

The cursor is a keyset position, ``(created_at, id)`` of the last job returned, the
same as the memory store's: every range resumes just after it, so a job that changes
status between pages is neither repeated nor the cause of a skip of others. DynamoDB
applies ``Limit`` before ``FilterExpression``, so a range may return fewer items than
asked with more to come; that is why ranges refill on demand.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...core.cursor import decode_cursor, encode_cursor
from ...core.models import Job, JobStatus
from ...core.requests import JobFilter, JobPage
from ...core.validation import page_limit
from ..wire import index_reads
from ..wire.conditions import UNEXPIRED
from ..wire.index_reads import CURRENT, FIRST_KEY, LAST_KEY, PREVIOUS, ListIndex
from ..wire.items import index_pk, list_pk, list_sk, number, phase, stored_from_item, text
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Call, Flow, Parallel
from .indexes import job_id_of, records

# A candidate: its sort position, and the job if its index holds whole records (else the
# id whose record must be read).
Candidate = tuple[str, Job | str]


@dataclass
class _Range:
    index: ListIndex
    partition: str
    low: str
    high: str
    prefix: str = ""  # what the index's sort key puts before ``list_sk``'s form
    start: Mapping[str, Any] | None = None
    exhausted: bool = False
    buffer: deque[Candidate] = field(default_factory=deque)

    @property
    def needs_page(self) -> bool:
        return not self.buffer and not self.exhausted


def list_jobs(
    layout: Layout, filter: JobFilter, limit: int, cursor: str | None, now: float
) -> Flow[JobPage]:
    limit = page_limit(limit)
    after = None if cursor is None else list_sk(*decode_cursor(cursor))
    ranges = _ranges(layout, filter, after)
    statuses = filter.statuses
    taken: list[Job] = []
    while len(taken) <= limit:
        hungry = [r for r in ranges if r.needs_page]
        if hungry:
            calls = tuple(_page(layout.table, r, limit + 1, filter, now) for r in hungry)
            replies = yield Parallel(calls)
            for each, reply in zip(hungry, replies, strict=True):
                _fill(each, reply, after, now)
            continue
        batch = _merge(ranges, limit + 1 - len(taken))
        if not batch:
            break
        taken += yield from _resolve(layout.table, batch, statuses, now)
    more = len(taken) > limit
    last = taken[limit - 1] if more else None
    next_cursor = None if last is None else encode_cursor(last.created_at.timestamp(), last.id)
    return JobPage(jobs=taken[:limit], next_cursor=next_cursor)


def _ranges(layout: Layout, filter: JobFilter, after: str | None) -> list[_Range]:
    queues = [filter.queue] if filter.queue is not None else sorted(layout.queue_urls)
    low = FIRST_KEY if after is None else after
    ranges = [
        _Range(CURRENT, list_pk(queue, shard), low, LAST_KEY)
        for queue in queues
        for shard in range(layout.index_shards)
    ]
    if layout.previous_index:
        statuses = sorted(filter.statuses) if filter.statuses is not None else list(JobStatus)
        resume = "" if after is None else after
        ranges += [
            _Range(PREVIOUS, index_pk(status, shard), f"{queue}#{resume}", f"{queue}$", f"{queue}#")
            for queue in queues
            for status in statuses
            for shard in range(layout.index_shards)
        ]
    return ranges


def _page(table: str, range_: _Range, limit: int, filter: JobFilter, now: float) -> Call:
    """Expired records are absent to readers, whether or not TTL has deleted them yet."""
    clauses = [UNEXPIRED]
    values: dict[str, Any] = {":now": number(now)}
    if filter.name is not None:
        clauses.append("#name = :name")
        values[":name"] = text(filter.name)
    if filter.tenant is not None:
        clauses.append("#tenant = :tenant")
        values[":tenant"] = text(filter.tenant)
    phases = _phases(filter.statuses)
    if range_.index is CURRENT and phases is not None:
        names = [f":phase{i}" for i in range(len(phases))]
        clauses.append(f"#phase IN ({', '.join(names)})")
        values |= {name: text(p) for name, p in zip(names, phases, strict=True)}
    return index_reads.query_index(
        table,
        range_.index,
        range_.partition,
        range_.low,
        range_.high,
        limit=limit,
        start=range_.start,
        filter=" AND ".join(clauses),
        values=values,
    )


def _phases(statuses: Collection[JobStatus] | None) -> list[str] | None:
    """The index phases ``statuses`` may be in; None: every phase (no filter needed)."""
    if statuses is None:
        return None
    phases = sorted({phase(status) for status in statuses})
    return None if len(phases) == len({phase(status) for status in JobStatus}) else phases


def _fill(range_: _Range, reply: Any, after: str | None, now: float) -> None:
    if isinstance(reply, AwsError):
        raise reply
    sort_key = range_.index.sort_key
    for item in reply.get("Items", []):
        position = str(item[sort_key]["S"]).removeprefix(range_.prefix)
        if after is not None and position <= after:
            continue
        if range_.index is CURRENT:
            range_.buffer.append((position, job_id_of(item)))
            continue
        stored = stored_from_item(item)
        if not stored.expired(now):
            range_.buffer.append((position, stored.job))
    range_.start = reply.get("LastEvaluatedKey")
    range_.exhausted = range_.start is None


def _merge(ranges: list[_Range], most: int) -> list[Job | str]:
    """Up to ``most`` candidates in merged order, stopping where a range must refill."""
    batch: list[Job | str] = []
    while len(batch) < most and not any(r.needs_page for r in ranges):
        heads = [r for r in ranges if r.buffer]
        if not heads:
            break
        batch.append(min(heads, key=lambda r: r.buffer[0][0]).buffer.popleft()[1])
    return batch


def _resolve(
    table: str, batch: list[Job | str], statuses: Collection[JobStatus] | None, now: float
) -> Flow[list[Job]]:
    """The batch's jobs in order: records read for index entries, checked against the filter."""
    wanted = [each for each in batch if isinstance(each, str)]
    found = (yield from records(table, wanted)) if wanted else {}
    jobs: list[Job] = []
    for each in batch:
        if isinstance(each, Job):
            jobs.append(each)
            continue
        stored = found.get(each)
        if stored is None or stored.expired(now):
            continue  # deleted or expired since the index was read
        if statuses is None or stored.job.status in statuses:
            jobs.append(stored.job)
    return jobs
