"""The producer façades: ``JobQueue`` (async) and ``SyncJobQueue`` (blocking).

Both hold a ``QueueConfig`` (``base``, with what else they share) and call
``enqueue.prepare`` for everything before the store; each I/O method is a few lines:
prepare, one store call, log. ``list`` and its keywords
come from ``listing`` (declared once for the façades and their tenant views), and
``wait``'s schedule of reads from ``waiting`` (one for every face).
``SyncJobQueue`` talks to the store's blocking face, so a Django view or a Lambda
function enqueues without an event loop and without importing aioboto3.

Given ``registry=``, a producer fills the options an enqueue leaves out (queue,
max_attempts, timeout, lease) from what the job's handler declares; an explicit argument
always wins (``enqueue``). Tenant views enqueue through their façade, so they do too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from functools import cached_property
from typing import Any, Unpack

from ..core.batches import Batch, BatchStatus
from ..core.errors import JobBatchError
from ..core.history import acting
from ..core.models import Job
from ..core.options import EnqueueOptions, enqueue_request
from ..core.requests import EnqueueRequest, EnqueueResult, JobPage
from ..core.store import (
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
from ..observe.tracing import enqueue_span
from .base import BaseQueue
from .enqueue import Prepared, prepare, prepare_many
from .listing import AsyncListing, ListOptions, SyncListing
from .pausing import AsyncPausing, SyncPausing
from .tenant import SyncTenantJobQueue, TenantJobQueue
from .waiting import wait_async, wait_blocking


def _items(jobs: list[Job], prepared: list[Prepared]) -> list[tuple[Job, str | None]]:
    """What ``put_many`` writes: the jobs (with their trace context) and fingerprints."""
    return [(job, p.fingerprint) for job, p in zip(jobs, prepared, strict=True)]


class JobQueue(BaseQueue, AsyncListing, AsyncPausing):
    """Enqueue, read, cancel and list jobs from async code (``list``: ``AsyncListing``)."""

    def for_tenant(self, tenant: str) -> TenantJobQueue:
        """A view that enqueues for ``tenant`` and reads, cancels and lists only its jobs.

        Hand it to code that serves one tenant; an invalid id is refused here, at once.

        Args:
            tenant: The tenant's id.

        Returns:
            The view, a [`TenantJobQueue`][sqsjobs.TenantJobQueue].

        Raises:
            JobConfigError: ``tenant`` is not a valid tenant id.
        """
        return TenantJobQueue(self, check_tenant(tenant))

    async def enqueue(
        self,
        name: str,
        payload: Any = None,
        **options: Unpack[EnqueueOptions],
    ) -> EnqueueResult:
        """Enqueue job ``name`` with ``payload``.

        Everything is checked before the store is written; a duplicate under the same
        idempotency key returns the job already there (``duplicate=True``).

        Args:
            name: The job's name, which picks the handler that runs it.
            payload: Its input, a JSON-compatible value (a handler's model validates it
                when it runs, and at once when the producer has a ``registry``).
            **options: ``EnqueueOptions`` (``core.options``): ``queue``, ``delay`` or
                ``run_at``, ``idempotency_key``, ``tenant``, ``group``, ``priority``,
                ``max_attempts``, ``timeout``, ``lease``, ``labels``, ``after``,
                ``debounce_key`` and ``debounce``.

        Returns:
            The job written, or the one already under its key (``duplicate=True``).

        Raises:
            JobConfigError: An invalid name, payload or option; nothing was written.
            TypeError: An option ``enqueue`` does not take.
            JobIdempotencyConflictError: The key holds a job with another name, tenant
                or payload.
            JobStoreError: The store failed (``JobStoreThrottledError`` if throttled).
        """
        request = enqueue_request("enqueue()", name, payload, options)
        prepared = prepare(self.config, request, self.clock())
        with enqueue_span([prepared.job]) as [job]:
            return self._logged(await self.store.put(job, prepared.fingerprint))

    async def enqueue_many(self, requests: Iterable[EnqueueRequest]) -> list[EnqueueResult]:
        """Enqueue several jobs, each with its own options; faster than one by one.

        Every request is checked before any is written; the store then writes them in
        groups (ten at a time on ``SqsJobStore``), so a failure can leave some written.

        Args:
            requests: The jobs, each an ``EnqueueRequest`` (``enqueue``'s arguments).

        Returns:
            One result per request, in request order, as ``enqueue`` returns it.

        Raises:
            JobConfigError: A request is invalid; nothing was written.
            JobBatchError: The store failed part-way: its ``results`` are the requests
                written before the failure, its ``__cause__`` the failure.
        """
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
        """Write the jobs in one DynamoDB transaction with the application's own writes:
        all commit, or none. The messages go after the commit; a crash before them is
        healed by the reconciler, or by a retry with the same idempotency keys.

        Args:
            requests: The jobs, as for ``enqueue_many`` (a job's record is one entry of
                the transaction's 100).
            items: ``TransactWriteItems`` entries in the low-level client's format
                (``{"Put": {"TableName": ..., "Item": {...}}}``), written as given.

        Returns:
            One result per request, in order; a key already held gives its job
            (``duplicate=True``) and does not cancel the transaction.

        Raises:
            JobConfigError: The store is not an ``SqsJobStore`` (``TransactionStore``), a
                request is invalid, or there are too many entries; nothing was written.
            JobTransactionError: DynamoDB cancelled the transaction; its ``reasons`` say
                why, entry by entry, and nothing was written.
            JobIdempotencyConflictError: A key holds a job with another payload.
        """
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
        """Enqueue ``requests`` as one batch (``core.batches``), written all or none.

        A callback's handler reads the batch's figures from ``ctx.batch``.

        Args:
            requests: The batch's jobs (1 to 10,000), without idempotency keys, parents
                or debounce keys.
            on_complete: A job to run once every job of the batch has ended, however.
            on_success: A job to run once they all completed; cancelled otherwise.

        Returns:
            The batch's id and its jobs' and callbacks' ids.

        Raises:
            JobConfigError: An invalid request, or a store that keeps no batches
                (``BatchStore``); nothing was written.
        """
        batch_id, jobs, callbacks = self._batch_parts(requests, on_complete, on_success)
        await batch_store(self.store).put_batch(batch_id, jobs, callbacks, self.clock())
        return self._logged_batch(batch_id, jobs, callbacks)

    async def batch_status(self, batch_id: str) -> BatchStatus | None:
        """How far the batch has come: its jobs by how they ended, and whether all have.

        Args:
            batch_id: The ``id`` of the ``Batch`` that ``batch`` returned.

        Returns:
            The batch's status, or ``None`` for an id with no batch.

        Raises:
            JobConfigError: The store keeps no batches.
        """
        return await batch_store(self.store).batch_status(batch_id, self.clock())

    async def get(self, job_id: str) -> Job | None:
        """The job's record as it stands now.

        Args:
            job_id: The job's ``id``, from its ``EnqueueResult``.

        Returns:
            The job, or ``None`` for an unknown id or one past its retention.
        """
        return await self.store.get(job_id, self.clock())

    async def wait(self, job_id: str, *, timeout: float | timedelta) -> Job:
        """The job's record once it has ended (completed, dead or cancelled).

        Reads it with ``get``: at once, then after 0.1, 0.2, 0.4 and 0.8 s, then once a
        second, and a last time at the deadline (``producer.waiting``), so a long wait
        costs about one read a second.

        Args:
            job_id: The job to wait for.
            timeout: Real elapsed time to wait, seconds (positive) or a ``timedelta``.

        Returns:
            The ended job; its ``status`` says how it ended, ``result`` what it returned.

        Raises:
            TimeoutError: The job has not ended by ``timeout`` (it runs on).
            JobConfigError: An invalid ``timeout`` (before any read), or an id with no
                record (``invalid_option``).
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
        """Cancel a job that has not ended. A running job's worker finds out at its next
        heartbeat (within a third of the lease) and interrupts the handler.

        Args:
            job_id: The job to cancel.
            by: Who cancels, kept in the job's history (when the store's ``cancel``
                takes it, as sqsjobs's stores do).

        Returns:
            True if it was cancelled; False if it had ended already, or is unknown.
        """
        cancelled = await acting(self.store.cancel, job_id, self.clock(), by=by)
        return self._logged_cancel(job_id, cancelled)

    async def _list_page(self, options: ListOptions) -> JobPage:
        filter, limit, cursor = options.query()
        return await self.store.list(filter, limit, cursor, self.clock())


class SyncJobQueue(BaseQueue, SyncListing, SyncPausing):
    """``JobQueue``'s blocking twin, for Lambda functions, Django, Flask and scripts."""

    @cached_property
    def _sync(self) -> SyncJobStore:
        return sync_face(self.store)

    def for_tenant(self, tenant: str) -> SyncTenantJobQueue:
        """Blocking form of [`JobQueue.for_tenant`][sqsjobs.JobQueue.for_tenant]: the view is a
        [`SyncTenantJobQueue`][sqsjobs.SyncTenantJobQueue]."""
        return SyncTenantJobQueue(self, check_tenant(tenant))

    def enqueue(
        self,
        name: str,
        payload: Any = None,
        **options: Unpack[EnqueueOptions],
    ) -> EnqueueResult:
        """Blocking form of [`JobQueue.enqueue`][sqsjobs.JobQueue.enqueue], on the store's
        blocking face: no event loop is needed, nor aioboto3."""
        request = enqueue_request("enqueue()", name, payload, options)
        prepared = prepare(self.config, request, self.clock())
        with enqueue_span([prepared.job]) as [job]:
            return self._logged(self._sync.put(job, prepared.fingerprint))

    def enqueue_many(self, requests: Iterable[EnqueueRequest]) -> list[EnqueueResult]:
        """Blocking form of [`JobQueue.enqueue_many`][sqsjobs.JobQueue.enqueue_many]."""
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
        """Blocking form of
        [`JobQueue.enqueue_in_transaction`][sqsjobs.JobQueue.enqueue_in_transaction]."""
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
        """Blocking form of [`JobQueue.batch`][sqsjobs.JobQueue.batch]."""
        batch_id, jobs, callbacks = self._batch_parts(requests, on_complete, on_success)
        sync_batch_store(self._sync).put_batch(batch_id, jobs, callbacks, self.clock())
        return self._logged_batch(batch_id, jobs, callbacks)

    def batch_status(self, batch_id: str) -> BatchStatus | None:
        """Blocking form of [`JobQueue.batch_status`][sqsjobs.JobQueue.batch_status]."""
        return sync_batch_store(self._sync).batch_status(batch_id, self.clock())

    def get(self, job_id: str) -> Job | None:
        """Blocking form of [`JobQueue.get`][sqsjobs.JobQueue.get]."""
        return self._sync.get(job_id, self.clock())

    def wait(self, job_id: str, *, timeout: float | timedelta) -> Job:
        """Blocking form of [`JobQueue.wait`][sqsjobs.JobQueue.wait]: the calling thread
        sleeps between the reads, which follow the same schedule."""
        return self._wait_for(job_id, timeout, self.get)

    def _wait_for(
        self, job_id: str, timeout: float | timedelta, read: Callable[[str], Job | None]
    ) -> Job:
        """``wait`` with the record read by ``read``: ``get``, or a tenant view's."""
        return wait_blocking(job_id, timeout, read, self._pacing)

    def cancel(self, job_id: str, *, by: str | None = None) -> bool:
        """Blocking form of [`JobQueue.cancel`][sqsjobs.JobQueue.cancel]."""
        cancelled = acting(self._sync.cancel, job_id, self.clock(), by=by)
        return self._logged_cancel(job_id, cancelled)

    def _list_page(self, options: ListOptions) -> JobPage:
        filter, limit, cursor = options.query()
        return self._sync.list(filter, limit, cursor, self.clock())
