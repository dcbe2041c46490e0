"""The options of ``list()``, declared once for every producer face.

``ListOptions`` declares them: each option's default and what it does, and the one way
they become what a store's ``list`` takes (``query``: checked by ``enqueue.list_filter``,
``JobConfigError`` for a bad one, before the store is asked). The faces take them as typed
keywords, written once per kind of face: ``AsyncListing.list`` serves ``JobQueue`` and
``TenantJobQueue``, ``SyncListing.list`` serves ``SyncJobQueue`` and
``SyncTenantJobQueue``. Each face supplies ``_list_page``, what it does with the value:
a façade asks its store, a tenant view binds its tenant and asks its façade.
``tests/test_list_options.py`` keeps both signatures equal to the fields.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import NamedTuple

from ..core.requests import JobFilter, JobPage, StatusFilter
from .enqueue import list_filter


class ListQuery(NamedTuple):
    """What a store's ``list`` takes, besides ``now``: checked options."""

    filter: JobFilter
    limit: int
    cursor: str | None


@dataclass(frozen=True, kw_only=True)
class ListOptions:
    """The options of ``list()``; ``None`` means any."""

    queue: str | None = None
    """Only this queue's jobs."""
    status: StatusFilter = None
    """Only jobs in this status, or in any of these (``JobStatus`` values or their names)."""
    name: str | None = None
    """Only jobs of this name."""
    tenant: str | None = None
    """Only this tenant's jobs (a tenant view lists its own, always)."""
    limit: int = 100
    """Jobs per page, 1 to 1000."""
    cursor: str | None = None
    """Where to go on from: the ``next_cursor`` of the page before."""

    def query(self) -> ListQuery:
        """The store's arguments, checked: ``JobConfigError`` for a bad option."""
        filter, limit = list_filter(
            queue=self.queue,
            status=self.status,
            name=self.name,
            tenant=self.tenant,
            limit=self.limit,
        )
        return ListQuery(filter, limit, self.cursor)


class AsyncListing(ABC):
    """``list()`` for the async faces: the keywords of ``ListOptions``, as one value."""

    @abstractmethod
    async def _list_page(self, options: ListOptions) -> JobPage:
        """The page ``options`` select (this face's tenant bound, for a view)."""

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
        """A page of jobs, oldest first; the options are ``ListOptions``'s.

        Args:
            queue: Only this queue's jobs.
            status: Only jobs in this status, or in any of these (``JobStatus`` values or
                their names).
            name: Only jobs of this name.
            tenant: Only this tenant's jobs (a tenant view lists its own, always).
            limit: Jobs per page, 1 to 1000.
            cursor: Where to go on from: the ``next_cursor`` of the page before.

        Returns:
            The page; its ``next_cursor`` is None after the last one.

        Raises:
            JobConfigError: An invalid option, refused before the store is asked.
        """
        options = ListOptions(
            queue=queue, status=status, name=name, tenant=tenant, limit=limit, cursor=cursor
        )
        return await self._list_page(options)


class SyncListing(ABC):
    """``AsyncListing``'s blocking twin, for the blocking faces."""

    @abstractmethod
    def _list_page(self, options: ListOptions) -> JobPage:
        """The page ``options`` select (this face's tenant bound, for a view)."""

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
        """Blocking form of [`JobQueue.list`][sqsjobs.JobQueue.list]."""
        options = ListOptions(
            queue=queue, status=status, name=name, tenant=tenant, limit=limit, cursor=cursor
        )
        return self._list_page(options)
