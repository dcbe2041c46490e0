"""Tenant-bound views of a producer: ``queue.for_tenant("acme")``.

A view holds its façade and one valid tenant id. It binds or checks the tenant of each
call and hands the call to the façade, whose config, store and logger do the rest, so
no rule is checked twice and a view behaves exactly like its façade for its own jobs.

What it enforces is an in-process guard for code given a view instead of the queue (a
request handler serving one tenant): through the view it cannot enqueue for, read,
cancel or list another tenant's jobs, nor jobs without a tenant. It is not a security
boundary against code that holds the façade, the store or AWS credentials: those reach
every tenant (see "Tenants and isolation" in the README).

Nor can it join another tenant's message group: every job with a tenant, through a view
or the façade alike, is grouped within its tenant (``tenant``, or ``{tenant}/{group}``
for a group it names: ``_validation.tenant_group``, applied where the request is
prepared), so the view needs no rule of its own for groups and a tenant's group means
the same whichever producer enqueued the job.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ._errors import JobConfigError
from ._models import Job
from ._requests import EnqueueRequest, EnqueueResult, JobPage

if TYPE_CHECKING:
    from ._queue import JobQueue, StatusFilter, SyncJobQueue

Facade = TypeVar("Facade", bound="JobQueue | SyncJobQueue")


class _TenantBound(Generic[Facade]):
    """The tenant checks both views share; no I/O."""

    def __init__(self, queue: Facade, tenant: str) -> None:
        self._queue = queue
        self._tenant = tenant

    @property
    def tenant(self) -> str:
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

    def _bound(self, requests: Iterable[EnqueueRequest]) -> list[EnqueueRequest]:
        """Every request bound to the view's tenant, all checked before any is written."""
        bound: list[EnqueueRequest] = []
        for index, request in enumerate(requests):
            if isinstance(request, EnqueueRequest):
                tenant = self._own(request.tenant, f"enqueue_many() item {index}")
                request = dataclasses.replace(request, tenant=tenant)
            bound.append(request)  # anything else: the façade refuses it, naming its index
        return bound

    def _mine(self, job: Job | None) -> Job | None:
        return job if job is not None and job.tenant == self._tenant else None


class TenantJobQueue(_TenantBound["JobQueue"]):
    """``JobQueue.for_tenant(tenant)``: the async producer methods, for one tenant only."""

    async def enqueue(
        self,
        name: str,
        payload: Any = None,
        *,
        queue: str | None = None,
        idempotency_key: str | None = None,
        tenant: str | None = None,
        group: str | None = None,
        delay: float | timedelta | None = None,
        run_at: datetime | None = None,
        priority: int = 0,
        max_attempts: int | None = None,
        timeout: float | None = None,
        lease: float | None = None,
    ) -> EnqueueResult:
        return await self._queue.enqueue(
            name,
            payload,
            queue=queue,
            idempotency_key=idempotency_key,
            tenant=self._own(tenant, "enqueue()"),
            group=group,
            delay=delay,
            run_at=run_at,
            priority=priority,
            max_attempts=max_attempts,
            timeout=timeout,
            lease=lease,
        )

    async def enqueue_many(self, requests: Iterable[EnqueueRequest]) -> list[EnqueueResult]:
        return await self._queue.enqueue_many(self._bound(requests))

    async def get(self, job_id: str) -> Job | None:
        """The job if it is this tenant's; another tenant's job is as absent as an unknown id."""
        return self._mine(await self._queue.get(job_id))

    async def cancel(self, job_id: str) -> bool:
        """Cancel the job if it is this tenant's; another tenant's is left alone (False).

        Read first, cancel after: cancelling first would have cancelled another tenant's
        job before finding out. Nothing can slip in between: a job's tenant never changes,
        and an id never passes to another tenant (random ids are never reused; a keyed id
        derives from queue, tenant and key, so a key freed by retention and taken again
        yields a job of the same tenant).
        """
        if await self.get(job_id) is None:
            return False
        return await self._queue.cancel(job_id)

    async def list(
        self,
        *,
        queue: str | None = None,
        status: StatusFilter = None,
        name: str | None = None,
        tenant: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> JobPage:
        return await self._queue.list(
            queue=queue,
            status=status,
            name=name,
            tenant=self._own(tenant, "list()"),
            limit=limit,
            cursor=cursor,
        )


class SyncTenantJobQueue(_TenantBound["SyncJobQueue"]):
    """``SyncJobQueue.for_tenant(tenant)``: ``TenantJobQueue``'s blocking twin."""

    def enqueue(
        self,
        name: str,
        payload: Any = None,
        *,
        queue: str | None = None,
        idempotency_key: str | None = None,
        tenant: str | None = None,
        group: str | None = None,
        delay: float | timedelta | None = None,
        run_at: datetime | None = None,
        priority: int = 0,
        max_attempts: int | None = None,
        timeout: float | None = None,
        lease: float | None = None,
    ) -> EnqueueResult:
        return self._queue.enqueue(
            name,
            payload,
            queue=queue,
            idempotency_key=idempotency_key,
            tenant=self._own(tenant, "enqueue()"),
            group=group,
            delay=delay,
            run_at=run_at,
            priority=priority,
            max_attempts=max_attempts,
            timeout=timeout,
            lease=lease,
        )

    def enqueue_many(self, requests: Iterable[EnqueueRequest]) -> list[EnqueueResult]:
        return self._queue.enqueue_many(self._bound(requests))

    def get(self, job_id: str) -> Job | None:
        """The job if it is this tenant's; another tenant's job is as absent as an unknown id."""
        return self._mine(self._queue.get(job_id))

    def cancel(self, job_id: str) -> bool:
        """Cancel the job if it is this tenant's (read first: see ``TenantJobQueue.cancel``)."""
        if self.get(job_id) is None:
            return False
        return self._queue.cancel(job_id)

    def list(
        self,
        *,
        queue: str | None = None,
        status: StatusFilter = None,
        name: str | None = None,
        tenant: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> JobPage:
        return self._queue.list(
            queue=queue,
            status=status,
            name=name,
            tenant=self._own(tenant, "list()"),
            limit=limit,
            cursor=cursor,
        )
