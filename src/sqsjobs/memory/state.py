"""The memory store's records and indexes, under one lock: the whole contract, synchronously.

One core holds the records under a ``threading.Lock`` so a ``SyncJobQueue`` in another
thread can enqueue safely; each public method takes the lock once. The async face
(``store``) adds nothing but waiting: it parks an idle claimer on a future that the
core resolves, from whatever thread, when a job becomes claimable on its queue.

Claims are O(log n): each queue keeps three heaps whose entries carry the record's
``version`` at push time, and an entry whose version no longer matches is dropped when
it surfaces (lazy deletion), so no operation scans every job.

``ready`` (claimable now, by priority desc, run_at, created_at, id), ``delayed`` (by
run_at, moved to ``ready`` when due), ``leases`` (by lease_until: found at the next claim).

Retention is a fourth, store-wide heap of terminal records by expiry, purged only when
the store is full: reads judge expiry themselves, so purging is about memory, not truth.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import threading
import uuid
from collections.abc import Callable, Sequence

from ..core import history
from ..core.cursor import decode_cursor, encode_cursor, follows
from ..core.errors import JobBatchError, JobConfigError, JobIdempotencyConflictError
from ..core.history import RETRY, action_entry
from ..core.lifecycle import (
    CANCELLABLE,
    DEAD,
    DELAYED,
    LEASE_EXPIRED_ERROR,
    QUEUED,
    RUNNING,
    TERMINAL,
    ClaimDecision,
    after_failure,
    after_release,
    holds_lease,
    may_heartbeat,
    past_retention,
    release_ends_attempt,
    retention_end,
)
from ..core.models import Job, JobStatus
from ..core.requests import EnqueueResult, JobFilter, JobPage
from ..core.validation import page_limit
from ..observe.log import LOGGER_NAME, Event, log_event
from .batches import BatchRules
from .debounce import DebounceRules
from .pauses import PauseRules
from .queue_index import QueueIndex
from .record import Progress, Record

_logger = logging.getLogger(LOGGER_NAME)


class MemoryCore(BatchRules, PauseRules, DebounceRules):
    """The records and their indexes; every public method takes the lock once."""

    def __init__(
        self, capacity: int, retention: float, dead_retention: float, clock: Callable[[], float]
    ) -> None:
        super().__init__()
        self.capacity = capacity
        self.retention = retention
        self.dead_retention = dead_retention
        self.clock = clock
        self.lock = threading.Lock()
        self.records: dict[str, Record] = {}
        # (queue, tenant, idempotency key) -> id: no tenant (None) is a scope of its own.
        self.keys: dict[tuple[str, str | None, str], str] = {}
        self.queues: dict[str, QueueIndex] = {}
        self.expiries: list[tuple[float, str]] = []

    # -- writes --------------------------------------------------------------------------

    def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        with self.lock:
            return self._put(job, fingerprint, self.clock())

    def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        results: list[EnqueueResult] = []
        with self.lock:
            now = self.clock()
            for job, fingerprint in items:
                try:
                    results.append(self._put(job, fingerprint, now))
                except (JobConfigError, JobIdempotencyConflictError) as error:
                    raise JobBatchError(
                        results, f"Batch stopped at request {len(results)}: {error}"
                    ) from error
        return results

    def _put(self, job: Job, fingerprint: str | None, now: float) -> EnqueueResult:
        if job.debounce_key is not None and (held := self.debounced(job, now)):
            return held
        if job.idempotency_key is not None:
            existing = self._holder((job.queue, job.tenant, job.idempotency_key), now)
            if existing is not None:
                if existing.fingerprint != fingerprint:
                    raise JobIdempotencyConflictError(job.idempotency_key, existing.id)
                return EnqueueResult(existing.to_job(), duplicate=True)
        parents = self.known_parents(job, now) if job.after else []
        if len(self.records) >= self.capacity:
            self._purge(now)
            if len(self.records) >= self.capacity:
                raise JobConfigError(
                    "store_full",
                    f"MemoryJobStore holds its capacity of {self.capacity} jobs; queued work is "
                    "never dropped to make room. Raise capacity, lower retention, or use "
                    "SqsJobStore.",
                )
        record = Record.from_job(job, fingerprint)
        self.records[record.id] = record
        if record.idempotency_key is not None:
            self.keys[(record.queue, record.tenant, record.idempotency_key)] = record.id
        self._index(record)
        self.hold_key(record)
        if job.after:
            self.wait_for(record, parents, now)
        return EnqueueResult(record.to_job(), duplicate=False)

    def _holder(self, scope: tuple[str, str | None, str], now: float) -> Record | None:
        """The live record bound to a key's scope; an expired one is dropped and frees it."""
        record_id = self.keys.get(scope)
        record = None if record_id is None else self.records.get(record_id)
        if record is not None and past_retention(record.expires_at, now):
            self._drop(record)
            return None
        return record

    def claim(self, queue: str, worker_id: str, now: float, limit: int) -> list[Job]:
        with self.lock:
            index = self.queues.get(queue)
            if index is None or queue in self.paused_since:
                return []
            self._promote(index, now)
            claimed: list[Job] = []
            while index.ready and len(claimed) < limit:
                *_, record_id, version = heapq.heappop(index.ready)
                record = self.records.get(record_id)
                if record is None or record.version != version:
                    continue
                decision = record.claim_decision(now)
                if decision is ClaimDecision.RUN:
                    claimed.append(self._lease(record, worker_id, now))
                elif decision is ClaimDecision.DEAD:
                    self._dead_at_lease_end(record, now)
                else:
                    self._defer(index, record)
            return claimed

    @staticmethod
    def _defer(index: QueueIndex, record: Record) -> None:
        """Put a ready entry that is not due at this ``now`` back on the heap that times it.

        A claim whose clock ran ahead promoted it; dropping it would lose the job for good.
        """
        if record.status is RUNNING:
            assert record.lease_until is not None
            heapq.heappush(index.leases, (record.lease_until, record.id, record.version))
        else:
            heapq.heappush(index.delayed, (record.run_at, record.id, record.version))

    def _promote(self, index: QueueIndex, now: float) -> None:
        while index.delayed and index.delayed[0][0] <= now:
            _, record_id, version = heapq.heappop(index.delayed)
            record = self.records.get(record_id)
            if record is not None and record.version == version:
                heapq.heappush(index.ready, record.ready_entry())
        while index.leases and index.leases[0][0] < now:
            _, record_id, version = heapq.heappop(index.leases)
            record = self.records.get(record_id)
            if record is None or record.version != version:
                continue
            if record.claim_decision(now) is ClaimDecision.DEAD:
                self._dead_at_lease_end(record, now)
            else:
                heapq.heappush(index.ready, record.ready_entry())

    def _lease(self, record: Record, worker_id: str, now: float) -> Job:
        if record.status is RUNNING:  # its lease ran out: it runs again
            record.note_attempt(history.RETRIED, now, kind=history.EXPIRED)
        record.status = RUNNING
        record.attempts += 1
        record.locked_by = worker_id
        record.lease_token = uuid.uuid4().hex
        record.lease_until = now + record.lease
        record.updated_at = record.started_at = now
        self._index(record)
        return record.to_job()

    def _dead_at_lease_end(self, record: Record, now: float) -> None:
        record.set_error(LEASE_EXPIRED_ERROR)
        record.note_attempt(history.DEAD, now, LEASE_EXPIRED_ERROR, kind=history.EXPIRED)
        self._move_to(record, DEAD, now)
        log_event(
            _logger,
            logging.WARNING,
            Event.DEAD,
            f"Job {record.name!r} ({record.id}) dead-lettered: {LEASE_EXPIRED_ERROR}",
            record.to_job(),
            error=LEASE_EXPIRED_ERROR,
        )

    def heartbeat(
        self, job_id: str, token: str, lease_until: float, now: float, progress: Progress = None
    ) -> bool:
        with self.lock:
            record = self._live(job_id, now)
            if record is None or not may_heartbeat(
                record.status, record.lease_token, record.lease_until, token, now
            ):
                return False
            record.keep_progress(progress)
            record.lease_until = lease_until
            record.updated_at = now
            self._index(record)
            return True

    def complete(
        self, job_id: str, token: str, now: float, result_json: str | None, progress: Progress
    ) -> bool:
        with self.lock:
            record = self._leased(job_id, token, progress)
            if record is None:
                return False
            record.result_json = result_json
            record.completed_at = now
            record.note_completion(now)
            self._move_to(record, JobStatus.COMPLETED, now)
            return True

    def fail(
        self, job_id: str, token: str, error: str, retry_at: float | None, now: float, p: Progress
    ) -> bool:
        with self.lock:
            record = self._leased(job_id, token, p)
            if record is None:
                return False
            status, run_at = after_failure(record.attempts, record.max_attempts, retry_at, now)
            record.set_error(error)
            record.run_at = run_at
            record.note_attempt(history.DEAD if status is DEAD else history.RETRIED, now, error)
            self._move_to(record, status, now)
            return True

    def release(
        self, job_id: str, token: str, error: str, now: float, run_at: float | None, p: Progress
    ) -> bool:
        with self.lock:
            record = self._leased(job_id, token, p)
            if record is None:
                return False
            if release_ends_attempt(error, run_at):
                record.note_attempt(history.RELEASED, now, error)
            status, record.run_at = after_release(run_at, now)
            record.attempts -= 1
            record.set_error(error)
            self._move_to(record, status, now)
            return True

    def cancel(self, job_id: str, now: float, by: str | None = None) -> bool:
        with self.lock:
            record = self._live(job_id, now)
            if record is None or record.status not in CANCELLABLE:
                return False
            cut = (record.attempts, record.locked_by) if record.status is RUNNING else None
            record.note(action_entry(now, history.CANCEL, history.CANCELLED, by, cut))
            self._move_to(record, JobStatus.CANCELLED, now)
            return True

    def retry(self, job_id: str, now: float, by: str | None = None, kind: str = RETRY) -> bool:
        """Run a dead job again, as ``SqsJobStore.retry`` does: queued now, attempts reset,
        ``last_error`` kept; its history says by whom and how (``kind``: retry, redrive)."""
        with self.lock:
            record = self._live(job_id, now)
            if record is None or record.status is not DEAD:
                return False
            record.note(action_entry(now, kind, history.QUEUED, by))
            record.attempts = 0
            record.run_at = now
            self._move_to(record, QUEUED, now)
            return True

    def _move_to(self, record: Record, status: JobStatus, now: float) -> None:
        """Move a record out of ``running`` (or a waiting status) and re-index it."""
        record.status = status
        record.locked_by = None
        record.lease_token = None
        record.lease_until = None
        record.updated_at = now
        record.expires_at = retention_end(status, now, self.retention, self.dead_retention)
        self._index(record)
        self.after_move(record, status, now)

    def _index(self, record: Record) -> None:
        """Invalidate the record's old heap entries and push the one its status needs."""
        record.version += 1
        index = self.queues.setdefault(record.queue, QueueIndex())
        if record.status is QUEUED:
            heapq.heappush(index.ready, record.ready_entry())
        elif record.status is DELAYED:
            heapq.heappush(index.delayed, (record.run_at, record.id, record.version))
        elif record.status is RUNNING:
            assert record.lease_until is not None
            heapq.heappush(index.leases, (record.lease_until, record.id, record.version))
        elif record.expires_at is not None:
            heapq.heappush(self.expiries, (record.expires_at, record.id))
        if record.status is not RUNNING and record.status not in TERMINAL:
            index.wake()

    # -- reads ---------------------------------------------------------------------------

    def _live(self, job_id: str, now: float) -> Record | None:
        record = self.records.get(job_id)
        if record is None or past_retention(record.expires_at, now):
            return None
        return record

    def _leased(self, job_id: str, token: str, progress: Progress) -> Record | None:
        """The record if the claim under ``token`` holds it, its progress then kept."""
        record = self.records.get(job_id)
        if record is None or not holds_lease(record.status, record.lease_token, token):
            return None
        record.keep_progress(progress)
        return record

    def get(self, job_id: str, now: float) -> Job | None:
        with self.lock:
            record = self._live(job_id, now)
            return None if record is None else record.to_job()

    def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        """A page in ``(created_at, id)`` order, or its reverse with ``newest_first``."""
        limit = page_limit(limit)
        newest = filter.newest_first
        past = None if cursor is None else decode_cursor(cursor, newest_first=newest)
        with self.lock:
            matching = [
                record
                for record in self.records.values()
                if filter.matches(record.queue, record.status, record.name, record.tenant)
                and not past_retention(record.expires_at, now)
                and (
                    past is None
                    or follows((record.created_at, record.id), past, newest_first=newest)
                )
            ]
            pick = heapq.nlargest if newest else heapq.nsmallest
            page = pick(limit + 1, matching, key=lambda r: (r.created_at, r.id))
            jobs = [record.to_job() for record in page[:limit]]
        if len(page) <= limit:
            return JobPage(jobs=jobs, next_cursor=None)
        last = page[limit - 1]
        return JobPage(jobs, encode_cursor(last.created_at, last.id, newest_first=newest))

    def next_change(self, queue: str) -> float | None:
        """The earliest time a delayed job falls due or a lease expires on ``queue``; None
        for a paused queue (its resume wakes the claimers)."""
        with self.lock:
            index = self.queues.get(queue)
            if index is None or queue in self.paused_since:
                return None
            times = [heap[0][0] for heap in (index.delayed, index.leases) if heap]
            return min(times) if times else None

    # -- housekeeping --------------------------------------------------------------------

    def _purge(self, now: float) -> None:
        while self.expiries and self.expiries[0][0] <= now:
            _, record_id = heapq.heappop(self.expiries)
            record = self.records.get(record_id)
            if record is not None and past_retention(record.expires_at, now):
                self._drop(record)

    def _drop(self, record: Record) -> None:
        del self.records[record.id]
        self.free_key(record)
        if record.idempotency_key is not None:
            self.keys.pop((record.queue, record.tenant, record.idempotency_key), None)

    # -- wake-ups ------------------------------------------------------------------------

    def add_waiter(self, queue: str, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        future: asyncio.Future[None] = loop.create_future()
        with self.lock:
            self.queues.setdefault(queue, QueueIndex()).waiters.add((loop, future))
        return future

    def remove_waiter(
        self, queue: str, loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]
    ) -> None:
        with self.lock:
            self.queues[queue].waiters.discard((loop, future))
