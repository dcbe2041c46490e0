"""The producer façades: ``JobQueue`` (async) and ``SyncJobQueue`` (blocking).

Both hold a ``QueueConfig`` and call ``enqueue.prepare`` for everything before the store;
each I/O method is a few lines: prepare, one store call, log. ``list`` and its keywords
come from ``listing`` (declared once for the façades and their tenant views), and
``wait``'s schedule of reads from ``waiting`` (one for every face).
``SyncJobQueue`` talks to the store's blocking face, so a Django view or a Lambda
function enqueues without an event loop and without importing aioboto3.

Given ``registry=``, a producer fills the options an enqueue leaves out (queue,
max_attempts, timeout, lease) from what the job's handler declares; an explicit argument
always wins (``enqueue``). Tenant views enqueue through their façade, so they do too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Any, Unpack

from ..core.backoff import Backoff
from ..core.batches import ON_COMPLETE, ON_SUCCESS, Batch, BatchStatus
from ..core.defaults import (
    DEFAULT_LEASE,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_QUEUE,
    DEFAULT_TIMEOUT,
)
from ..core.errors import JobBatchError
from ..core.history import acting
from ..core.models import Job
from ..core.options import EnqueueOptions, enqueue_request
from ..core.requests import EnqueueRequest, EnqueueResult, JobPage
from ..core.store import (
    JobStore,
    PauseStore,
    SyncJobStore,
    SyncPauseStore,
    batch_store,
    pause_store,
    sync_batch_store,
    sync_face,
    sync_pause_store,
    sync_transaction_store,
    transaction_store,
)
from ..core.validation import check_tenant
from ..observe.log import Event, default_logger, log_event
from ..observe.tracing import enqueue_span
from .batching import BatchParts, prepare_batch
from .enqueue import Prepared, QueueConfig, prepare, prepare_many
from .listing import AsyncListing, ListOptions, SyncListing
from .pausing import AsyncPausing, SyncPausing
from .tenant import SyncTenantJobQueue, TenantJobQueue
from .waiting import REAL_PACING, Pacing, wait_async, wait_blocking

if TYPE_CHECKING:
    from ..handlers.registry import JobRegistry

DEFAULT_BACKOFF = Backoff()


def _items(jobs: list[Job], prepared: list[Prepared]) -> list[tuple[Job, str | None]]:
    """What ``put_many`` writes: the jobs (with their trace context) and fingerprints."""
    return [(job, p.fingerprint) for job, p in zip(jobs, prepared, strict=True)]


class _BaseQueue:
    """Configuration and logging shared by both façades; no I/O."""

    # The clock and sleeps ``wait`` runs on (``waiting.Pacing``): real ones, which a test
    # replaces on its queue to assert the schedule of reads without sleeping.
    _pacing: Pacing = REAL_PACING

    def __init__(
        self,
        store: JobStore,
        *,
        default_queue: str = DEFAULT_QUEUE,
        payload_max_bytes: int = 65536,
        default_max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        default_timeout: float = DEFAULT_TIMEOUT,
        default_lease: float = DEFAULT_LEASE,
        backoff: Backoff = DEFAULT_BACKOFF,
        clock: Callable[[], float] = time.time,
        logger: logging.Logger | None = None,
        registry: JobRegistry | None = None,
    ) -> None:
        self.config = QueueConfig.build(
            store,
            default_queue=default_queue,
            payload_max_bytes=payload_max_bytes,
            default_max_attempts=default_max_attempts,
            default_timeout=default_timeout,
            default_lease=default_lease,
            backoff=backoff,
            clock=clock,
            registry=registry,
        )
        self.store = store
        self.logger = default_logger(logger)

    @property
    def default_queue(self) -> str:
        return self.config.default_queue

    @property
    def payload_max_bytes(self) -> int:
        return self.config.payload_max_bytes

    @property
    def backoff(self) -> Backoff:
        return self.config.backoff

    @property
    def clock(self) -> Callable[[], float]:
        return self.config.clock

    @property
    def registry(self) -> JobRegistry | None:
        """The registry whose handlers' defaults fill this producer's enqueues, if any."""
        return self.config.registry

    def _logged(self, result: EnqueueResult) -> EnqueueResult:
        job = result.job
        if result.duplicate:
            log_event(
                self.logger,
                logging.INFO,
                Event.DUPLICATE,
                f"Job {job.name!r} already enqueued as {job.id} for its idempotency key",
                job,
            )
        else:
            log_event(
                self.logger,
                logging.INFO,
                Event.ENQUEUE,
                f"Enqueued job {job.name!r} ({job.id})",
                job,
                delay=max(0.0, (job.run_at - job.created_at).total_seconds()),
            )
        return result

    def _batch_parts(
        self,
        requests: Iterable[EnqueueRequest],
        on_complete: EnqueueRequest | None,
        on_success: EnqueueRequest | None,
    ) -> BatchParts:
        callbacks = ((ON_COMPLETE, on_complete), (ON_SUCCESS, on_success))
        return prepare_batch(self.config, requests, callbacks, self.clock())

    def _logged_batch(self, batch_id: str, jobs: list[Job], callbacks: list[Job]) -> Batch:
        log_event(
            self.logger,
            logging.INFO,
            Event.ENQUEUE,
            f"Enqueued batch {batch_id}: {len(jobs)} jobs, {len(callbacks)} callbacks",
            jobs[0],
        )
        return Batch(batch_id, tuple(j.id for j in jobs), tuple(c.id for c in callbacks))

    def _logged_all(self, results: list[EnqueueResult]) -> list[EnqueueResult]:
        return [self._logged(result) for result in results]

    def _logged_pause(self, queue: str, paused: bool) -> None:
        event, did = (Event.PAUSED, "Paused") if paused else (Event.RESUMED, "Resumed")
        log_event(self.logger, logging.INFO, event, f"{did} queue {queue!r}", queue=queue)

    def _logged_cancel(self, job_id: str, cancelled: bool) -> bool:
        if cancelled:
            log_event(
                self.logger,
                logging.INFO,
                Event.CANCELLED,
                f"Cancelled job {job_id}",
                job_id=job_id,
            )
        return cancelled


class JobQueue(_BaseQueue, AsyncListing, AsyncPausing):
    """Enqueue, read, cancel and list jobs from async code (``list``: ``AsyncListing``)."""

    def for_tenant(self, tenant: str) -> TenantJobQueue:
        """A view that enqueues for ``tenant`` and reads, cancels and lists only its jobs.

        Hand it to code that serves one tenant; an invalid id is refused here, at once.
        """
        return TenantJobQueue(self, check_tenant(tenant))

    async def enqueue(
        self,
        name: str,
        payload: Any = None,
        **options: Unpack[EnqueueOptions],
    ) -> EnqueueResult:
        """Enqueue job ``name`` with ``payload``; ``options`` are ``EnqueueOptions``.

        Everything is checked before the store is written; a duplicate under the same
        idempotency key returns the job already there (``duplicate=True``).
        """
        request = enqueue_request("enqueue()", name, payload, options)
        prepared = prepare(self.config, request, self.clock())
        with enqueue_span([prepared.job]) as [job]:
            return self._logged(await self.store.put(job, prepared.fingerprint))

    async def enqueue_many(self, requests: Iterable[EnqueueRequest]) -> list[EnqueueResult]:
        prepared = prepare_many(self.config, requests, self.clock())
        with enqueue_span([p.job for p in prepared]) as jobs:
            try:
                results = await self.store.put_many(_items(jobs, prepared))
            except JobBatchError as error:
                self._logged_all(error.results)
                raise
            return self._logged_all(results)

    async def enqueue_in_transaction(
        self, requests: Iterable[EnqueueRequest], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]:
        """Write the jobs in one DynamoDB transaction with ``items``, the application's own
        ``TransactWriteItems`` entries (low-level client format): all commit, or none
        (``JobTransactionError``, with AWS's reasons). The messages go after the commit;
        a crash before them is healed by the reconciler, or by a retry with the same
        idempotency keys. ``SqsJobStore`` only (else ``JobConfigError``)."""
        store = transaction_store(self.store)
        prepared = prepare_many(self.config, requests, self.clock())
        with enqueue_span([p.job for p in prepared]) as jobs:
            return self._logged_all(await store.put_in_transaction(_items(jobs, prepared), items))

    def _pausing(self) -> tuple[PauseStore, float]:
        return pause_store(self.store), self.clock()

    async def batch(
        self,
        requests: Iterable[EnqueueRequest],
        *,
        on_complete: EnqueueRequest | None = None,
        on_success: EnqueueRequest | None = None,
    ) -> Batch:
        """Enqueue ``requests`` as one batch (``core.batches``): ``on_complete`` runs once
        every job has ended, ``on_success`` once they all completed (else it is cancelled);
        a callback's handler reads the batch's figures from ``ctx.batch``."""
        batch_id, jobs, callbacks = self._batch_parts(requests, on_complete, on_success)
        await batch_store(self.store).put_batch(batch_id, jobs, callbacks, self.clock())
        return self._logged_batch(batch_id, jobs, callbacks)

    async def batch_status(self, batch_id: str) -> BatchStatus | None:
        """How far the batch has come; ``None`` for an id with no batch."""
        return await batch_store(self.store).batch_status(batch_id, self.clock())

    async def get(self, job_id: str) -> Job | None:
        return await self.store.get(job_id, self.clock())

    async def wait(self, job_id: str, *, timeout: float | timedelta) -> Job:
        """The job's record once it has ended (completed, dead or cancelled).

        Reads it with ``get``: at once, then after 0.1, 0.2, 0.4 and 0.8 s, then once a
        second, and a last time at the deadline (``producer.waiting``), so a long wait
        costs about one read a second. ``timeout`` is real elapsed time, a positive
        number of seconds or a ``timedelta`` (``JobConfigError`` before any read).
        Raises ``TimeoutError`` if the job has not ended by then (the job runs on), and
        ``JobConfigError`` (``invalid_option``) for an id with no record.
        """
        return await self._wait_for(job_id, timeout, self.get)

    async def _wait_for(
        self,
        job_id: str,
        timeout: float | timedelta,
        read: Callable[[str], Awaitable[Job | None]],
    ) -> Job:
        """``wait`` with the record read by ``read``: ``get``, or a tenant view's."""
        return await wait_async(job_id, timeout, read, self._pacing)

    async def cancel(self, job_id: str, *, by: str | None = None) -> bool:
        """Cancel a job that has not ended (False if it has, or is unknown); ``by`` names
        who did, in its history, when the store's ``cancel`` takes it."""
        cancelled = await acting(self.store.cancel, job_id, self.clock(), by=by)
        return self._logged_cancel(job_id, cancelled)

    async def _list_page(self, options: ListOptions) -> JobPage:
        filter, limit, cursor = options.query()
        return await self.store.list(filter, limit, cursor, self.clock())


class SyncJobQueue(_BaseQueue, SyncListing, SyncPausing):
    """``JobQueue``'s blocking twin, for Lambda functions, Django, Flask and scripts."""

    @cached_property
    def _sync(self) -> SyncJobStore:
        return sync_face(self.store)

    def for_tenant(self, tenant: str) -> SyncTenantJobQueue:
        """``JobQueue.for_tenant``, blocking: a view bound to ``tenant``."""
        return SyncTenantJobQueue(self, check_tenant(tenant))

    def enqueue(
        self,
        name: str,
        payload: Any = None,
        **options: Unpack[EnqueueOptions],
    ) -> EnqueueResult:
        """Enqueue job ``name`` with ``payload``; ``options`` are ``EnqueueOptions``.

        Everything is checked before the store is written; a duplicate under the same
        idempotency key returns the job already there (``duplicate=True``).
        """
        request = enqueue_request("enqueue()", name, payload, options)
        prepared = prepare(self.config, request, self.clock())
        with enqueue_span([prepared.job]) as [job]:
            return self._logged(self._sync.put(job, prepared.fingerprint))

    def enqueue_many(self, requests: Iterable[EnqueueRequest]) -> list[EnqueueResult]:
        prepared = prepare_many(self.config, requests, self.clock())
        with enqueue_span([p.job for p in prepared]) as jobs:
            try:
                results = self._sync.put_many(_items(jobs, prepared))
            except JobBatchError as error:
                self._logged_all(error.results)
                raise
            return self._logged_all(results)

    def enqueue_in_transaction(
        self, requests: Iterable[EnqueueRequest], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]:
        """``JobQueue.enqueue_in_transaction``, blocking."""
        store = sync_transaction_store(self._sync)
        prepared = prepare_many(self.config, requests, self.clock())
        with enqueue_span([p.job for p in prepared]) as jobs:
            return self._logged_all(store.put_in_transaction(_items(jobs, prepared), items))

    def _pausing(self) -> tuple[SyncPauseStore, float]:
        return sync_pause_store(self._sync), self.clock()

    def batch(
        self,
        requests: Iterable[EnqueueRequest],
        *,
        on_complete: EnqueueRequest | None = None,
        on_success: EnqueueRequest | None = None,
    ) -> Batch:
        """``JobQueue.batch``, blocking."""
        batch_id, jobs, callbacks = self._batch_parts(requests, on_complete, on_success)
        sync_batch_store(self._sync).put_batch(batch_id, jobs, callbacks, self.clock())
        return self._logged_batch(batch_id, jobs, callbacks)

    def batch_status(self, batch_id: str) -> BatchStatus | None:
        """``JobQueue.batch_status``, blocking."""
        return sync_batch_store(self._sync).batch_status(batch_id, self.clock())

    def get(self, job_id: str) -> Job | None:
        return self._sync.get(job_id, self.clock())

    def wait(self, job_id: str, *, timeout: float | timedelta) -> Job:
        """``JobQueue.wait``, blocking the calling thread: the record once the job has
        ended, read on the same schedule; ``TimeoutError`` if it has not by ``timeout``."""
        return self._wait_for(job_id, timeout, self.get)

    def _wait_for(
        self, job_id: str, timeout: float | timedelta, read: Callable[[str], Job | None]
    ) -> Job:
        """``wait`` with the record read by ``read``: ``get``, or a tenant view's."""
        return wait_blocking(job_id, timeout, read, self._pacing)

    def cancel(self, job_id: str, *, by: str | None = None) -> bool:
        cancelled = acting(self._sync.cancel, job_id, self.clock(), by=by)
        return self._logged_cancel(job_id, cancelled)

    def _list_page(self, options: ListOptions) -> JobPage:
        filter, limit, cursor = options.query()
        return self._sync.list(filter, limit, cursor, self.clock())
