"""MemoryJobStore: the full store contract in one process, for tests and single-process apps.

The records, their indexes and every rule live in ``MemoryCore`` (``memory.state``),
behind one lock; this module is the store's two faces over it. The async face adds the
wait that lets an idle claimer start a new job at once instead of at its next poll;
the blocking face (``sync``) serves ``SyncJobQueue`` from any thread.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import JsonValue

from ..core.batches import BatchStatus
from ..core.history import REDRIVE
from ..core.models import Job, JobStatus
from ..core.presence import WorkerPresence
from ..core.progress import checked_progress
from ..core.reports import RedriveProgress, RedriveReport
from ..core.requests import EnqueueResult, JobFilter, JobPage
from ..core.store import SlotTaken
from ..core.validation import check_job_name, dump_json, integer, plain_json, seconds
from .presence import MemoryPresence
from .slots import MemorySlots
from .state import MemoryCore

PAGE = 1000  # the records a redrive reads per page of its own listing


class MemoryJobStore:
    """The store contract in memory: not durable, not shared between processes.

    Correct for tests and single-process apps: the same claims, fencing, retries and
    retention as ``SqsJobStore``, checked by the same conformance suite. At capacity it
    purges expired terminal records and then refuses new jobs (``store_full``) rather
    than dropping queued work.
    """

    keeps_progress = True  # heartbeats and outcomes take ``progress=`` (``ctx.progress``)

    def __init__(
        self,
        *,
        capacity: int = 10_000,
        retention: float = 86_400,
        dead_retention: float = 604_800,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._core = MemoryCore(
            integer(capacity, "capacity", minimum=1, code=None),
            seconds(retention, "retention", code=None),
            seconds(dead_retention, "dead_retention", code=None),
            clock,
        )
        self._slots = MemorySlots()
        self._presence = MemoryPresence()
        self.sync = MemorySyncView(self._core, self._presence)

    async def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        """Write a new job, or find the live one holding its key (``JobStore.put``)."""
        return self._core.put(job, fingerprint)

    async def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        """``put`` for each, in order, under one lock (``JobStore.put_many``)."""
        return self._core.put_many(items)

    async def claim(
        self, queue: str, worker_id: str, now: float, *, limit: int = 1, wait: float = 0.0
    ) -> list[Job]:
        """Claim up to ``limit`` jobs; with ``wait``, wait that long for one to arrive."""
        jobs = self._core.claim(queue, worker_id, now, limit)
        if jobs or wait <= 0:
            return jobs
        loop = asyncio.get_running_loop()
        started = loop.time()
        while True:
            future = self._core.add_waiter(queue, loop)
            try:
                waited = loop.time() - started
                jobs = self._core.claim(queue, worker_id, now + waited, limit)
                if jobs or waited >= wait:
                    return jobs
                await asyncio.wait(
                    [future], timeout=self._sleep(queue, now + waited, wait - waited)
                )
            finally:
                future.cancel()
                self._core.remove_waiter(queue, loop, future)

    def _sleep(self, queue: str, now: float, remaining: float) -> float:
        change = self._core.next_change(queue)
        if change is None:
            return remaining
        return min(remaining, max(change - now, 0.0) + 0.001)

    async def heartbeat(
        self,
        job_id: str,
        lease_token: str,
        lease_until: float,
        now: float,
        *,
        progress: JsonValue | None = None,
    ) -> bool:
        """Extend the lease; ``progress``: the run's latest, kept with it (``ctx.progress``),
        here and in the outcomes below."""
        kept = _progress_json(progress)
        return self._core.heartbeat(job_id, lease_token, lease_until, now, kept)

    async def complete(
        self,
        job_id: str,
        lease_token: str,
        now: float,
        result: Any,
        *,
        progress: JsonValue | None = None,
    ) -> bool:
        """Record the job completed with ``result``; False if the lease was lost."""
        result_json, kept = _result_json(result), _progress_json(progress)
        return self._core.complete(job_id, lease_token, now, result_json, kept)

    async def fail(
        self,
        job_id: str,
        lease_token: str,
        error: str,
        retry_at: float | None,
        now: float,
        *,
        progress: JsonValue | None = None,
    ) -> bool:
        """Record a failed attempt: retried at ``retry_at``, else dead; False if lost."""
        kept = _progress_json(progress)
        return self._core.fail(job_id, lease_token, error, retry_at, now, kept)

    async def release(
        self,
        job_id: str,
        lease_token: str,
        error: str,
        now: float,
        *,
        run_at: float | None = None,
        progress: JsonValue | None = None,
    ) -> bool:
        """Give the job back, queued or delayed until ``run_at``, its attempt not counted."""
        kept = _progress_json(progress)
        return self._core.release(job_id, lease_token, error, now, run_at, kept)

    async def take_slot(
        self, key: str, order: Sequence[int], holder: str, until: float, now: float
    ) -> SlotTaken:
        """Hold the first free slot of ``key`` in ``order`` (``LimitStore.take_slot``)."""
        return self._slots.take(key, order, holder, until, now)

    async def extend_slot(self, key: str, slot: int, holder: str, until: float, now: float) -> bool:
        """Hold ``slot`` until ``until``; False if ``holder`` lost it."""
        return self._slots.extend(key, slot, holder, until)

    async def free_slot(self, key: str, slot: int, holder: str, now: float) -> bool:
        """Free ``slot`` at once; False if ``holder`` lost it."""
        return self._slots.free(key, slot, holder)

    async def put_presence(self, presence: WorkerPresence) -> None:
        """Write a worker's presence record (``core.presence``), replacing its last."""
        self._presence.put(presence)

    async def end_presence(self, worker_id: str, now: float) -> None:
        """End ``worker_id``'s presence record: a worker that stopped is gone at once."""
        self._presence.end(worker_id, now)

    async def presences(self, now: float) -> list[WorkerPresence]:
        """The workers whose presence records have not run out by ``now``."""
        return self._presence.alive(now)

    async def cancel(self, job_id: str, now: float, *, by: str | None = None) -> bool:
        """Cancel a job that has not ended; ``by``: who, for its history."""
        return self._core.cancel(job_id, now, by)

    async def retry(self, job_id: str, now: float, *, by: str | None = None) -> bool:
        """Run a dead job again (attempts reset); False if unknown, expired or not dead."""
        return self._core.retry(job_id, now, by)

    async def redrive(
        self,
        queue: str | None = None,
        *,
        limit: int | None = None,
        on_progress: RedriveProgress | None = None,
        name: str | None = None,
        by: str | None = None,
    ) -> RedriveReport:
        """Run the dead jobs of ``queue`` (every queue if None) again, oldest first: see
        ``redrive_dead``."""
        return redrive_dead(self._core, queue, limit, on_progress, name, by)

    async def get(self, job_id: str, now: float) -> Job | None:
        """The job's record; None if unknown or past its retention."""
        return self._core.get(job_id, now)

    async def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        """A page of the jobs ``filter`` selects (``JobStore.list``)."""
        return self._core.list(filter, limit, cursor, now)

    async def put_batch(
        self, batch_id: str, jobs: Sequence[Job], callbacks: Sequence[Job], now: float
    ) -> None:
        """Write a batch's jobs and its callbacks (``core.batches``), all or none."""
        with self._core.lock:
            self._core.put_batch(batch_id, jobs, callbacks, now)

    async def pause(self, queue: str, now: float) -> None:
        """Claims from ``queue`` find nothing until ``resume``; running jobs run on."""
        self._core.pause(queue, now)

    async def resume(self, queue: str, now: float) -> None:
        """Let claims from ``queue`` start jobs again, waking its waiting claimers."""
        self._core.resume(queue)

    async def paused(self, now: float) -> Mapping[str, float]:
        """Each paused queue, and when it was paused."""
        return self._core.paused()

    async def batch_status(self, batch_id: str, now: float) -> BatchStatus | None:
        """How far the batch has come; None for an id with no batch."""
        with self._core.lock:
            return self._core.batch_status(batch_id)


class MemorySyncView:
    """The blocking producer face of a ``MemoryJobStore`` (its ``sync`` attribute)."""

    def __init__(self, core: MemoryCore, presence: MemoryPresence) -> None:
        self._core = core
        self._presence = presence

    def put_presence(self, presence: WorkerPresence) -> None:
        self._presence.put(presence)

    def end_presence(self, worker_id: str, now: float) -> None:
        self._presence.end(worker_id, now)

    def presences(self, now: float) -> list[WorkerPresence]:
        return self._presence.alive(now)

    def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        return self._core.put(job, fingerprint)

    def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        return self._core.put_many(items)

    def get(self, job_id: str, now: float) -> Job | None:
        return self._core.get(job_id, now)

    def cancel(self, job_id: str, now: float, *, by: str | None = None) -> bool:
        return self._core.cancel(job_id, now, by)

    def retry(self, job_id: str, now: float, *, by: str | None = None) -> bool:
        return self._core.retry(job_id, now, by)

    def redrive(
        self,
        queue: str | None = None,
        *,
        limit: int | None = None,
        on_progress: RedriveProgress | None = None,
        name: str | None = None,
        by: str | None = None,
    ) -> RedriveReport:
        return redrive_dead(self._core, queue, limit, on_progress, name, by)

    def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        return self._core.list(filter, limit, cursor, now)

    def put_batch(
        self, batch_id: str, jobs: Sequence[Job], callbacks: Sequence[Job], now: float
    ) -> None:
        with self._core.lock:
            self._core.put_batch(batch_id, jobs, callbacks, now)

    def pause(self, queue: str, now: float) -> None:
        self._core.pause(queue, now)

    def resume(self, queue: str, now: float) -> None:
        self._core.resume(queue)

    def paused(self, now: float) -> Mapping[str, float]:
        return self._core.paused()

    def batch_status(self, batch_id: str, now: float) -> BatchStatus | None:
        with self._core.lock:
            return self._core.batch_status(batch_id)


def redrive_dead(
    core: MemoryCore,
    queue: str | None,
    limit: int | None,
    on_progress: RedriveProgress | None,
    name: str | None,
    by: str | None = None,
) -> RedriveReport:
    """``SqsJobStore.redrive`` for a store with no dead-letter queue: its dead records are
    its dead letters, so each is retried, oldest first, up to ``limit`` of job ``name``.

    Every report counts only ``redriven``: a record holds no message to discard or skip.
    """
    if limit is not None:
        integer(limit, "limit", minimum=1, code="invalid_option")
    if name is not None:
        check_job_name(name)
    now = core.clock()
    dead = JobFilter(queue=queue, statuses=frozenset({JobStatus.DEAD}), name=name)
    found: list[str] = []
    cursor: str | None = None
    while limit is None or len(found) < limit:
        page = core.list(dead, PAGE, cursor, now)
        found += [job.id for job in page.jobs]
        cursor = page.next_cursor
        if cursor is None:
            break
    redriven = sum(core.retry(job_id, now, by, REDRIVE) for job_id in found[:limit])
    report = RedriveReport(redriven=redriven, discarded=0, skipped=0)
    if on_progress is not None:
        on_progress(report)
    return report


def _result_json(result: Any) -> str | None:
    return None if result is None else dump_json(plain_json(result, "result"))


def _progress_json(progress: JsonValue | None) -> str | None:
    """Progress as kept; checked again, as a store's own input (``core.progress``)."""
    return None if progress is None else dump_json(checked_progress(progress))
