"""``list``: a k-way merge over the list indexes' partitions, in order, within a budget.

Each queue's jobs are in ``layout.index_shards`` partitions of the ``by_queue`` index for
open jobs, and as many for each terminal status (``wire.items``), plus, while the table
has it, a key range of each (status, shard) partition of the previous layout's
``by_status``. A page queries every range the filter allows, all at once, and merges
them on ``list_sk`` order (``created_at``, then id), fetching a range's next page only
when its buffer runs dry before the merge is done. A list of waiting or running jobs
reads open partitions only, and one of a terminal status reads that status's: what the
table keeps of other jobs is never read. Records that ended under record format 2 stay
in their open partition: while the deployment writes format 2 a terminal filter reads
the open partitions too; from format 3 on such records are listed unfiltered or with an
open status, and drop out of a terminal status's list until their retention ends.

``by_queue`` knows a job's phase (open, or how it ended), its name, tenant and expiry,
but not its status: candidates from it are checked against their records, fetched with
``BatchGetItem`` a page at a time, and only those whose status the filter allows are
kept. ``by_status`` projects whole records and needs no fetch.

**Budget.** A call evaluates at most ``BUDGET_PER_ITEM`` x ``limit`` index entries (plus
one per partition it reads: each query asks for one at least), counted as DynamoDB
counts them before filters (``ScannedCount``). A filter that matches few of the entries
in between (a rare name or tenant, a status that few jobs are in) would otherwise make
one call read the queue's whole history; instead the call returns what it found, fewer
than ``limit`` jobs or none, with a cursor at the furthest position every range has been
read to. Callers page on until ``next_cursor`` is ``None``.

The cursor is a keyset position, ``(created_at, id)``, the same as the memory store's:
every range resumes just past it (after it, or before it newest first), so a job that
changes status between pages is neither repeated nor the cause of a skip of others. The
cursor names its direction (``core.cursor``): one read the other way is refused.
DynamoDB applies ``Limit`` before ``FilterExpression``, so a range may return fewer items
than asked with more to come; that is why ranges refill on demand.

**Newest first** (``JobFilter.newest_first``) is the same walk from the other end, so
that the jobs that ended last come first without reading the history before them:
every range is queried backwards (``ScanIndexForward`` false), bounded above by the
cursor; the merge takes the greatest head, and a budget's frontier is the highest
position every range has been read down to.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...core.cursor import decode_cursor, encode_cursor, follows
from ...core.lifecycle import TERMINAL
from ...core.models import Job, JobStatus
from ...core.requests import JobFilter, JobPage
from ...core.validation import page_limit
from ..wire import index_reads
from ..wire.conditions import UNEXPIRED
from ..wire.index_keys import ended_list_pk, index_pk, list_pk, list_sk, phase
from ..wire.index_reads import CURRENT, FIRST_KEY, LAST_KEY, PREVIOUS, ListIndex
from ..wire.items import number, stored_from_item, text
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Call, Flow, Parallel
from .indexes import job_id_of, records

BUDGET_PER_ITEM = 10  # index entries a call may evaluate per job asked for

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
    phases: list[str] | None = None  # the phases a ``by_queue`` range filters on
    start: Mapping[str, Any] | None = None
    exhausted: bool = False
    read_to: str = ""  # the position of the last entry evaluated
    buffer: deque[Candidate] = field(default_factory=deque)

    @property
    def needs_page(self) -> bool:
        return not self.buffer and not self.exhausted


def list_jobs(
    layout: Layout, filter: JobFilter, limit: int, cursor: str | None, now: float
) -> Flow[JobPage]:
    limit = page_limit(limit)
    newest = filter.newest_first
    past = None if cursor is None else list_sk(*decode_cursor(cursor, newest_first=newest))
    ranges = _ranges(layout, filter, past)
    statuses = filter.statuses
    budget, spent, stopped = BUDGET_PER_ITEM * limit, 0, False
    taken: list[Job] = []
    while len(taken) <= limit:
        hungry = [r for r in ranges if r.needs_page]
        if hungry and spent >= budget:
            stopped = True
            break
        if hungry:
            each = max(1, min(limit + 1, -(-(budget - spent) // len(hungry))))
            calls = tuple(_page(layout.table, r, each, filter, now) for r in hungry)
            replies = yield Parallel(calls)
            for range_, reply in zip(hungry, replies, strict=True):
                spent += _fill(range_, reply, past, newest, now)
            continue
        batch = _merge(ranges, limit + 1 - len(taken), newest)
        if not batch:
            break
        taken += yield from _resolve(layout.table, batch, statuses, now)
    frontier = None
    if stopped:  # what every range has been read past is complete: take all of it
        read_to = [r.read_to for r in ranges if not r.exhausted]
        frontier = max(read_to) if newest else min(read_to)
        while len(taken) <= limit:
            batch = _merge(ranges, limit + 1 - len(taken), newest, upto=frontier)
            if not batch:
                break
            taken += yield from _resolve(layout.table, batch, statuses, now)
    next_cursor = None if frontier is None else _cursor_at(frontier, newest)
    if len(taken) > limit:
        last = taken[limit - 1]
        next_cursor = encode_cursor(last.created_at.timestamp(), last.id, newest_first=newest)
    return JobPage(jobs=taken[:limit], next_cursor=next_cursor)


def _cursor_at(position: str, newest: bool) -> str:
    """The cursor resuming past a ``list_sk`` position."""
    created, job_id = position.split("#", 1)
    return encode_cursor(float(created), job_id, newest_first=newest)


def _ranges(layout: Layout, filter: JobFilter, past: str | None) -> list[_Range]:
    """Every range the filter allows, each bounded on the cursor's side by ``past``."""
    queues = [filter.queue] if filter.queue is not None else sorted(layout.queue_urls)
    statuses = sorted(filter.statuses) if filter.statuses is not None else list(JobStatus)
    ended = [status for status in statuses if status in TERMINAL]
    phases = _phases(filter.statuses)
    low, high = FIRST_KEY, LAST_KEY
    if past is not None and filter.newest_first:
        high = past
    elif past is not None:
        low = past
    ranges: list[_Range] = []
    # Format 2 ends jobs in place: their open partitions hold terminal ones too.
    if len(ended) < len(statuses) or not layout.indexed.moves:
        for queue in queues:
            for shard in range(layout.index_shards):
                ranges.append(_Range(CURRENT, list_pk(queue, shard), low, high, phases=phases))
    for queue in queues:
        for status in ended:
            for shard in range(layout.index_shards):
                partition = ended_list_pk(queue, shard, status)
                ranges.append(_Range(CURRENT, partition, low, high))
    if layout.previous_index:  # ``gsi_sk`` is ``list_sk`` after "{queue}#"
        ranges += [
            _Range(
                PREVIOUS,
                index_pk(status, shard),
                f"{queue}#" if low == FIRST_KEY else f"{queue}#{low}",
                f"{queue}$" if high == LAST_KEY else f"{queue}#{high}",
                f"{queue}#",
            )
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
    if range_.phases is not None:
        names = [f":phase{i}" for i in range(len(range_.phases))]
        clauses.append(f"#phase IN ({', '.join(names)})")
        values |= {name: text(p) for name, p in zip(names, range_.phases, strict=True)}
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
        forward=not filter.newest_first,
    )


def _phases(statuses: Collection[JobStatus] | None) -> list[str] | None:
    """The index phases ``statuses`` may be in; None: every phase (no filter needed)."""
    if statuses is None:
        return None
    phases = sorted({phase(status) for status in statuses})
    return None if len(phases) == len({phase(status) for status in JobStatus}) else phases


def _fill(range_: _Range, reply: Any, past: str | None, newest: bool, now: float) -> int:
    """Buffer a page's candidates; how many entries DynamoDB evaluated for it."""
    if isinstance(reply, AwsError):
        raise reply
    sort_key = range_.index.sort_key
    for item in reply.get("Items", []):
        position = str(item[sort_key]["S"]).removeprefix(range_.prefix)
        if past is not None and not follows(position, past, newest_first=newest):
            continue
        if range_.index is CURRENT:
            range_.buffer.append((position, job_id_of(item)))
            continue
        stored = stored_from_item(item)
        if not stored.past_retention(now):
            range_.buffer.append((position, stored.job))
    range_.start = reply.get("LastEvaluatedKey")
    range_.exhausted = range_.start is None
    if range_.start is not None:
        range_.read_to = str(range_.start[sort_key]["S"]).removeprefix(range_.prefix)
    return int(reply.get("ScannedCount", len(reply.get("Items", []))))


def _merge(
    ranges: list[_Range], most: int, newest: bool, upto: str | None = None
) -> list[Job | str]:
    """Up to ``most`` candidates in merged order, stopping where a range must refill, or,
    with ``upto``, at that position (every range has been read past it)."""
    batch: list[Job | str] = []
    last = None
    first = max if newest else min
    while len(batch) < most and (upto is not None or not any(r.needs_page for r in ranges)):
        heads = [
            r
            for r in ranges
            if r.buffer and (upto is None or not follows(r.buffer[0][0], upto, newest_first=newest))
        ]
        if not heads:
            break
        position, candidate = first(heads, key=lambda r: r.buffer[0][0]).buffer.popleft()
        if position != last:  # an entry seen in two partitions while it moved between them
            batch.append(candidate)
        last = position
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
        if stored is None or stored.past_retention(now):
            continue  # deleted or expired since the index was read
        if statuses is None or stored.job.status in statuses:
            jobs.append(stored.job)
    return jobs
