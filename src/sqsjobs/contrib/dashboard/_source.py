"""What the dashboard reads and changes, over whichever store it was given.

Every read goes through the store's own methods: ``list`` and ``get`` (the SPI every
store has), and ``stats`` where the store has one (``SqsJobStore``: counts from the
list index and the SQS depths). Without ``stats`` (``MemoryJobStore``) the counts come
from listing the records. Throughput and the oldest waiting job are always read from
records (``_figures``), because no store keeps them: throughput from the jobs created in
its window, the oldest waiting job from one page of queued ones.

Reads never touch a dead-letter queue's messages: receiving one, even to peek, hides
it and adds to its receive count, and a page that refreshes itself every few seconds
must change nothing. The dead-letter page lists dead *records* and SQS's depth.

Actions are the stores' operator calls: ``cancel`` (every store), ``retry`` (revive a
dead job) and ``redrive`` (every dead job of a queue, by handler name if asked: from the
DLQs on ``SqsJobStore``, from the dead records on ``MemoryJobStore``). Which a store has
is read from the SPI's capability protocols (``sqsjobs.core.store``), nothing else. Each
names the dashboard (``ACTOR``) in the history of the jobs it acts on, where the store's
call takes ``by`` (``core.history.acting``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ...core import presence
from ...core.attention import QueueHealth, reasons
from ...core.batches import BatchStatus
from ...core.cursor import encode_cursor
from ...core.history import acting
from ...core.lifecycle import COMPLETED, DEAD, QUEUED
from ...core.models import Job, JobStatus
from ...core.requests import JobFilter, JobPage
from ...core.store import (
    BatchStore,
    DepthStore,
    JobStore,
    PauseStore,
    PresenceStore,
    RedriveStore,
    RetryStore,
    RoutedStore,
    StatsStore,
    pause_store,
)
from ...core.times import epoch
from ...core.validation import check_queue_name
from . import _figures as figures
from ._shared import Shared

if TYPE_CHECKING:
    from ...core.presence import WorkerPresence
    from ...core.reports import QueueStats

ACTOR = "dashboard"  # who acted, as a job's history says
SCAN_PAGE = 1000  # the stores' largest page
SCAN_LIMIT = 5000  # records one overview reads at most
# How often the throughput's records are read again, at the least: its buckets are five
# minutes wide, so a read every refresh would bill a store's records for nothing.
SAMPLE_EVERY = 60.0


@dataclass(frozen=True)
class Depths:
    """What SQS says a queue holds (approximate counts)."""

    messages: int
    in_flight: int
    delayed: int
    dead_letter_messages: int | None  # None: the queue has no DLQ


@dataclass(frozen=True)
class QueueSummary:
    queue: str
    counts: Mapping[JobStatus, int]
    depths: Depths | None  # None: the store has no SQS queues
    oldest_waiting: float | None  # seconds since the queued job due first was due
    throughput: figures.Throughput
    workers: int | None = None  # alive workers serving it; None: the store keeps no presence
    last_claim_at: datetime | None = None  # when one of them last claimed from it
    reasons: tuple[str, ...] = ()  # what needs attention (``core.attention``)
    paused_since: float | None = None  # when it was paused, fleet-wide; None: running


@dataclass(frozen=True)
class Overview:
    queues: list[QueueSummary]
    scanned: int  # records read to compute what the store does not count
    complete: bool  # False: the read stopped at SCAN_LIMIT, so figures are partial
    attention: list[str] = field(default_factory=list)  # every queue's reasons, in order


class JobSource:
    """The store as the dashboard uses it, with the clock that dates each call."""

    def __init__(self, store: JobStore, clock: Callable[[], float], window: float = 0.0) -> None:
        self.store = store
        self.clock = clock
        self.shared = Shared(window)  # what every viewer's refresh reads (``_shared``)
        self.sampled = Shared(max(window, SAMPLE_EVERY))  # the throughput's records
        # The last overview read, and when: shown, with its age, while the store fails.
        self.last_overview: tuple[Overview, float] | None = None

    @property
    def can_retry(self) -> bool:
        return isinstance(self.store, RetryStore)

    async def scan(self, filter: JobFilter, since: float | None = None) -> tuple[list[Job], bool]:
        """Up to ``SCAN_LIMIT`` records, oldest first (created from ``since`` on, if given);
        True when that was all of them."""
        now = self.clock()
        found: list[Job] = []
        cursor = None if since is None else encode_cursor(since, "")
        while len(found) < SCAN_LIMIT:
            page = await self.store.list(
                filter, min(SCAN_PAGE, SCAN_LIMIT - len(found)), cursor, now
            )
            found.extend(page.jobs)
            cursor = page.next_cursor
            if cursor is None:
                return found, True
        return found, False

    async def queue_names(self, seen: Sequence[Job] = ()) -> list[str]:
        """The store's queues if it names them, and every queue a record was seen in."""
        named = set(self.store.queue_urls) if isinstance(self.store, RoutedStore) else set()
        return sorted(named | {job.queue for job in seen})

    async def overview(self) -> Overview:
        """Counts, depths and figures of every queue; one read per refresh interval."""
        return await self.shared.read("overview", self._overview)

    async def _overview(self) -> Overview:
        """A store that counts (``stats``) is read for the throughput's window only: the
        jobs created in the last ``figures.WINDOW`` that ended, however long its history.
        One that does not is read whole, for its counts too."""
        counted = isinstance(self.store, StatsStore)
        if counted:
            records, complete = await self.sampled.read("ended", self._recently_ended)
        else:
            records, complete = await self.scan(JobFilter())
        now = self.clock()
        rates = figures.throughput(records, now)
        stats = await self._stats()
        counts = (
            {found.queue: found.counts for found in stats} if counted else figures.counts(records)
        )
        depths = {found.queue: _depths(found) for found in stats}
        paused = await self._paused(now)
        queues = sorted(set(await self.queue_names(records)) | set(counts) | set(paused))
        serving = await self._serving(stats, records, now)
        summaries = []
        for queue in queues:
            queue_counts = counts.get(queue, {status: 0 for status in JobStatus})
            served = serving.get(queue) or _Served(await self._oldest_waiting(queue, now))
            depth = depths.get(queue)
            health = QueueHealth(
                queue,
                queue_counts.get(QUEUED, 0),
                served.workers,
                served.oldest_waiting,
                None if depth is None else depth.dead_letter_messages,
                served.unserved,
            )
            summaries.append(
                QueueSummary(
                    queue,
                    queue_counts,
                    depth,
                    served.oldest_waiting,
                    rates.get(queue, figures.Throughput()),
                    served.workers,
                    served.last_claim_at,
                    tuple(reasons(health)),
                    paused.get(queue),
                )
            )
        attention = [reason for summary in summaries for reason in summary.reasons]
        found = Overview(summaries, len(records), complete, attention)
        self.last_overview = (found, now)
        return found

    async def _recently_ended(self) -> tuple[list[Job], bool]:
        ended = JobFilter(statuses=frozenset({COMPLETED, DEAD}))
        return await self.scan(ended, since=self.clock() - figures.WINDOW)

    async def dead_letter_depths(self) -> dict[str, int]:
        """Messages waiting in each queue's DLQ, as SQS counts them; empty without DLQs.
        A store that reads them alone (``DepthStore``) is asked that, not for its stats."""
        if isinstance(self.store, DepthStore):
            return await self.shared.read("depths", self.store.dead_letter_depths)
        stats = await self.shared.read("stats", self._stats)
        depths = {found.queue: found.dead_letter_messages for found in stats}
        return {queue: depth for queue, depth in depths.items() if depth is not None}

    async def _paused(self, now: float) -> Mapping[str, float]:
        if isinstance(self.store, PauseStore):
            return await self.store.paused(now)
        return {}

    async def pause(self, queue: str, paused: bool) -> None:
        """Pause or resume ``queue`` for the whole fleet (``JobConfigError``: not a queue
        this store has, or a store that cannot pause)."""
        store = pause_store(self.store)
        self.shared.forget()
        name = check_queue_name(queue)
        await (store.pause(name, self.clock()) if paused else store.resume(name, self.clock()))

    async def _stats(self) -> list[QueueStats]:
        if isinstance(self.store, StatsStore):
            return await self.store.stats()
        return []

    async def _serving(
        self, stats: list[QueueStats], records: list[Job], now: float
    ) -> dict[str, _Served]:
        """Per queue, who serves it and how long its work has waited: from ``stats``
        where the store counts (its presence records read there, the waiting names from
        the open records), else from the presence records and the records scanned.
        A queue left out is for ``_oldest_waiting`` to fill in."""
        if stats:
            return {found.queue: _served_by(found, now) for found in stats}
        if not isinstance(self.store, PresenceStore):
            return {}
        alive = await self.store.presences(now)
        names = figures.waiting_names(records)
        return {
            queue: _served(
                alive, queue, names.get(queue, {}), await self._oldest_waiting(queue, now)
            )
            for queue in set(await self.queue_names(records)) | {q for p in alive for q in p.queues}
        }

    async def _oldest_waiting(self, queue: str, now: float) -> float | None:
        page = await self.store.list(
            JobFilter(queue=queue, statuses=frozenset({QUEUED})), 1, None, now
        )
        return None if not page.jobs else max(0.0, now - epoch(page.jobs[0].run_at))

    async def page(self, filter: JobFilter, cursor: str | None, limit: int) -> JobPage:
        return await self.store.list(filter, limit, cursor, self.clock())

    async def get(self, job_id: str) -> Job | None:
        return await self.store.get(job_id, self.clock())

    async def batch(self, batch_id: str) -> BatchStatus | None:
        """A batch's figures; ``None`` for no such batch, or a store that keeps none."""
        if not isinstance(self.store, BatchStore):
            return None
        return await self.store.batch_status(batch_id, self.clock())

    async def cancel(self, job_id: str) -> bool:
        self.shared.forget()
        self.sampled.forget()
        return await acting(self.store.cancel, job_id, self.clock(), by=ACTOR)

    async def retry(self, job_id: str) -> bool:
        if not isinstance(self.store, RetryStore):
            return False
        self.shared.forget()
        self.sampled.forget()
        return await acting(self.store.retry, job_id, self.clock(), by=ACTOR)

    async def redrive(self, queue: str | None, name: str | None) -> int:
        """Send dead jobs back to their queues; how many went back."""
        if not isinstance(self.store, RedriveStore):
            return 0
        self.shared.forget()
        self.sampled.forget()
        report = await acting(self.store.redrive, queue, name=name, by=ACTOR)
        return report.redriven


@dataclass(frozen=True)
class _Served:
    """Who serves a queue, as the overview says it."""

    oldest_waiting: float | None
    workers: int | None = None
    last_claim_at: datetime | None = None
    unserved: Mapping[str, int] = field(default_factory=dict)


def _served_by(found: QueueStats, now: float) -> _Served:
    oldest = found.oldest_queued_at
    return _Served(
        None if oldest is None else max(0.0, now - epoch(oldest)),
        found.workers,
        found.last_claim_at,
        found.unserved_names,
    )


def _served(
    alive: list[WorkerPresence], queue: str, waiting: Mapping[str, int], oldest: float | None
) -> _Served:
    served = presence.served_names(alive, queue)
    return _Served(
        oldest,
        len(presence.serving(alive, queue)),
        presence.last_claim(alive, queue),
        {name: count for name, count in waiting.items() if name not in served},
    )


def _depths(found: QueueStats) -> Depths:
    return Depths(found.messages, found.in_flight, found.delayed, found.dead_letter_messages)
