"""Tenant-bound views of a producer: ``queue.for_tenant("acme")``.

A view holds its façade and one valid tenant id. It binds or checks the tenant of each
call and hands the call to the façade, whose config, store and logger do the rest, so
no rule is checked twice and a view behaves exactly like its façade for its own jobs.

What it enforces is an in-process guard for code given a view instead of the queue (a
request handler serving one tenant): through the view it cannot enqueue for, read, wait
for, cancel or list another tenant's jobs, nor jobs without a tenant, nor write or read
another tenant's batch. It is not a
security boundary against code that holds the façade, the store or AWS credentials:
those reach every tenant (see "Tenants and isolation" in the README).

Nor can it join another tenant's message group: every job with a tenant, through a view
or the façade alike, is grouped within its tenant (``tenant``, or ``{tenant}/{group}``
for a group it names: ``core.validation.tenant_group``, applied where the request is
prepared), so the view needs no rule of its own for groups and a tenant's group means
the same whichever producer enqueued the job.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any, Protocol, Unpack

from ..core.batches import Batch, BatchStatus
from ..core.errors import JobConfigError
from ..core.models import Job
from ..core.options import EnqueueOptions
from ..core.requests import EnqueueRequest, EnqueueResult, JobPage
from .listing import AsyncListing, ListOptions, SyncListing


class AsyncProducer(Protocol):
    """What an async view hands its calls to: ``JobQueue``."""

    async def enqueue(
        self, name: str, payload: Any = None, **options: Unpack[EnqueueOptions]
    ) -> EnqueueResult: ...

    async def enqueue_many(self, requests: Iterable[EnqueueRequest]) -> list[EnqueueResult]: ...

    async def enqueue_in_transaction(
        self, requests: Iterable[EnqueueRequest], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]: ...

    async def get(self, job_id: str) -> Job | None: ...

    async def batch(
        self,
        requests: Iterable[EnqueueRequest],
        *,
        on_complete: EnqueueRequest | None = None,
        on_success: EnqueueRequest | None = None,
    ) -> Batch: ...

    async def batch_status(self, batch_id: str) -> BatchStatus | None: ...

    async def cancel(self, job_id: str, *, by: str | None = None) -> bool: ...

    async def _wait_for(
        self,
        job_id: str,
        timeout: float | timedelta,
        read: Callable[[str], Awaitable[Job | None]],
    ) -> Job: ...

    async def _list_page(self, options: ListOptions) -> JobPage: ...


class SyncProducer(Protocol):
    """What a blocking view hands its calls to: ``SyncJobQueue``."""

    def enqueue(
        self, name: str, payload: Any = None, **options: Unpack[EnqueueOptions]
    ) -> EnqueueResult: ...

    def enqueue_many(self, requests: Iterable[EnqueueRequest]) -> list[EnqueueResult]: ...

    def enqueue_in_transaction(
        self, requests: Iterable[EnqueueRequest], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]: ...

    def get(self, job_id: str) -> Job | None: ...

    def batch(
        self,
        requests: Iterable[EnqueueRequest],
        *,
        on_complete: EnqueueRequest | None = None,
        on_success: EnqueueRequest | None = None,
    ) -> Batch: ...

    def batch_status(self, batch_id: str) -> BatchStatus | None: ...

    def cancel(self, job_id: str, *, by: str | None = None) -> bool: ...

    def _wait_for(
        self, job_id: str, timeout: float | timedelta, read: Callable[[str], Job | None]
    ) -> Job: ...

    def _list_page(self, options: ListOptions) -> JobPage: ...


class _TenantBound:
    """The tenant checks both views share; no I/O."""

    def __init__(self, tenant: str) -> None:
        self._tenant = tenant

    @property
    def tenant(self) -> str:
        """The tenant this view is bound to."""
        return self._tenant

    def __repr__(self) -> str:
        return f"{type(self).__name__}(tenant={self._tenant!r})"

    def _own(self, tenant: object, where: str) -> str:
        """The view's tenant, if ``tenant`` (from the caller) is it or is left out."""
        if tenant is not None and tenant != self._tenant:
            raise JobConfigError(
                "invalid_option",
                f"{where} has tenant {tenant!r}, but this queue is bound to tenant "
                f"{self._tenant!r}: pass tenant={self._tenant!r} or leave it out",
            )
        return self._tenant

    def _bound(
        self, requests: Iterable[EnqueueRequest], where: str = "enqueue_many()"
    ) -> list[EnqueueRequest]:
        """Every request bound to the view's tenant, all checked before any is written."""
        return [self._bound_one(r, f"{where} item {i}") for i, r in enumerate(requests)]

    def _bound_one(self, request: EnqueueRequest, where: str) -> EnqueueRequest:
        if not isinstance(request, EnqueueRequest):
            return request  # the façade refuses it, naming where it was
        return dataclasses.replace(request, tenant=self._own(request.tenant, where))

    def _callbacks(
        self, on_complete: EnqueueRequest | None, on_success: EnqueueRequest | None
    ) -> dict[str, EnqueueRequest | None]:
        """A batch's callbacks bound to the view's tenant, as ``batch``'s keywords."""
        given = {"on_complete": on_complete, "on_success": on_success}
        return {
            role: None if request is None else self._bound_one(request, f"batch() {role}")
            for role, request in given.items()
        }

    def _my_batch(self, status: BatchStatus | None) -> BatchStatus | None:
        """A batch all of whose jobs are the view's tenant's; any other is as absent as an
        unknown id (a batch mixing tenants, written through the façade, too)."""
        return status if status is not None and status.tenant == self._tenant else None

    def _mine(self, job: Job | None) -> Job | None:
        return job if job is not None and job.tenant == self._tenant else None

    def _listed(self, options: ListOptions) -> ListOptions:
        """``options`` bound to the view's tenant (a ``tenant`` among them must be it)."""
        return dataclasses.replace(options, tenant=self._own(options.tenant, "list()"))


class TenantJobQueue(_TenantBound, AsyncListing):
    """``JobQueue.for_tenant(tenant)``: the async producer methods, for one tenant only."""

    def __init__(self, queue: AsyncProducer, tenant: str) -> None:
        super().__init__(tenant)
        self._queue = queue

    async def enqueue(
        self,
        name: str,
        payload: Any = None,
        **options: Unpack[EnqueueOptions],
    ) -> EnqueueResult:
        """Enqueue for this view's tenant; ``options`` are ``EnqueueOptions``, and a
        ``tenant`` among them must be this view's."""
        options["tenant"] = self._own(options.get("tenant"), "enqueue()")
        return await self._queue.enqueue(name, payload, **options)

    async def enqueue_many(self, requests: Iterable[EnqueueRequest]) -> list[EnqueueResult]:
        """``JobQueue.enqueue_many`` with every request bound to this tenant; one naming
        another tenant is refused (``JobConfigError``) before anything is written."""
        return await self._queue.enqueue_many(self._bound(requests))

    async def enqueue_in_transaction(
        self, requests: Iterable[EnqueueRequest], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]:
        """``JobQueue.enqueue_in_transaction`` with every request bound to this tenant;
        ``items`` are the application's, which the view does not read."""
        bound = self._bound(requests, "enqueue_in_transaction()")
        return await self._queue.enqueue_in_transaction(bound, items)

    async def get(self, job_id: str) -> Job | None:
        """The job if it is this tenant's; another tenant's job is as absent as an unknown id."""
        return self._mine(await self._queue.get(job_id))

    async def batch(
        self,
        requests: Iterable[EnqueueRequest],
        *,
        on_complete: EnqueueRequest | None = None,
        on_success: EnqueueRequest | None = None,
    ) -> Batch:
        """``JobQueue.batch`` for this tenant: its requests and callbacks are bound to it
        (one naming another tenant is refused before anything is written)."""
        requests = self._bound(requests, "batch()")
        return await self._queue.batch(requests, **self._callbacks(on_complete, on_success))

    async def batch_status(self, batch_id: str) -> BatchStatus | None:
        """The batch's status if it is this tenant's; another's is None, as an unknown id."""
        return self._my_batch(await self._queue.batch_status(batch_id))

    async def wait(self, job_id: str, *, timeout: float | timedelta) -> Job:
        """``JobQueue.wait`` for this tenant's job, read through this view's ``get``: another
        tenant's job is as unknown as an id without a record (``JobConfigError``), and its
        status is never shown, not even in a ``TimeoutError``."""
        return await self._queue._wait_for(job_id, timeout, self.get)

    async def cancel(self, job_id: str, *, by: str | None = None) -> bool:
        """Cancel the job if it is this tenant's; another tenant's is left alone (False).

        Read first, cancel after: cancelling first would have cancelled another tenant's
        job before finding out. Nothing can slip in between: a job's tenant never changes,
        and an id never passes to another tenant (random ids are never reused; a keyed id
        derives from queue, tenant and key, so a key freed by retention and taken again
        yields a job of the same tenant).
        """
        if await self.get(job_id) is None:
            return False
        return await self._queue.cancel(job_id, by=by)

    async def _list_page(self, options: ListOptions) -> JobPage:
        return await self._queue._list_page(self._listed(options))


class SyncTenantJobQueue(_TenantBound, SyncListing):
    """``SyncJobQueue.for_tenant(tenant)``: ``TenantJobQueue``'s blocking twin."""

    def __init__(self, queue: SyncProducer, tenant: str) -> None:
        super().__init__(tenant)
        self._queue = queue

    def enqueue(
        self,
        name: str,
        payload: Any = None,
        **options: Unpack[EnqueueOptions],
    ) -> EnqueueResult:
        """Enqueue for this view's tenant; ``options`` are ``EnqueueOptions``, and a
        ``tenant`` among them must be this view's."""
        options["tenant"] = self._own(options.get("tenant"), "enqueue()")
        return self._queue.enqueue(name, payload, **options)

    def enqueue_many(self, requests: Iterable[EnqueueRequest]) -> list[EnqueueResult]:
        """``TenantJobQueue.enqueue_many``, blocking."""
        return self._queue.enqueue_many(self._bound(requests))

    def enqueue_in_transaction(
        self, requests: Iterable[EnqueueRequest], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]:
        """``TenantJobQueue.enqueue_in_transaction``, blocking."""
        bound = self._bound(requests, "enqueue_in_transaction()")
        return self._queue.enqueue_in_transaction(bound, items)

    def get(self, job_id: str) -> Job | None:
        """The job if it is this tenant's; another tenant's job is as absent as an unknown id."""
        return self._mine(self._queue.get(job_id))

    def batch(
        self,
        requests: Iterable[EnqueueRequest],
        *,
        on_complete: EnqueueRequest | None = None,
        on_success: EnqueueRequest | None = None,
    ) -> Batch:
        """``TenantJobQueue.batch``, blocking."""
        requests = self._bound(requests, "batch()")
        return self._queue.batch(requests, **self._callbacks(on_complete, on_success))

    def batch_status(self, batch_id: str) -> BatchStatus | None:
        """``TenantJobQueue.batch_status``, blocking."""
        return self._my_batch(self._queue.batch_status(batch_id))

    def wait(self, job_id: str, *, timeout: float | timedelta) -> Job:
        """``SyncJobQueue.wait`` for this tenant's job only (see ``TenantJobQueue.wait``)."""
        return self._queue._wait_for(job_id, timeout, self.get)

    def cancel(self, job_id: str, *, by: str | None = None) -> bool:
        """Cancel the job if it is this tenant's (read first: see ``TenantJobQueue.cancel``);
        ``by`` says who, in the job's history."""
        if self.get(job_id) is None:
            return False
        return self._queue.cancel(job_id, by=by)

    def _list_page(self, options: ListOptions) -> JobPage:
        return self._queue._list_page(self._listed(options))
