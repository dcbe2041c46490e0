"""Which jobs a listing shows, in which order, and how many a page (``Listing``).

Shared by ``jobs list`` and ``dlq list``, whose dead jobs are the first page of
``jobs list --status dead``: one path from the options to the store's ``list``, so both
read the same jobs in the same order.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import JobConfigError, JobPage
from ..core.requests import ended_only
from ..producer.listing import ListOptions
from ._errors import usage_error

if TYPE_CHECKING:
    from ..aws import SqsJobStore


@dataclass(frozen=True)
class Listing:
    """Which jobs a listing shows, in which order, and how many a page.

    Jobs that ended are history an operator reads from its recent end ("what failed
    just now?"), so a listing of ended statuses alone is newest first unless told
    otherwise; open work is listed in the order it was enqueued, as it will run.
    """

    queue: str | None
    statuses: tuple[str, ...]
    name: str | None
    tenant: str | None
    limit: int
    newest_first: bool

    @classmethod
    def build(
        cls,
        queue: str | None,
        statuses: tuple[str, ...],
        name: str | None,
        tenant: str | None,
        limit: int,
        newest: bool | None,
    ) -> Listing:
        """``newest`` as asked (``--newest``/``--oldest``), else by the statuses."""
        newest_first = ended_only(statuses) if newest is None else newest
        return cls(queue, statuses, name, tenant, limit, newest_first)

    @property
    def end(self) -> str:
        return "newest" if self.newest_first else "oldest"

    def title(self) -> str:
        which = f" ({' or '.join(self.statuses)})" if self.statuses else ""
        named = "".join(
            f" {label} {value}"
            for label, value in (("named", self.name), ("of tenant", self.tenant))
            if value
        )
        where = f"queue {self.queue}" if self.queue else "every queue"
        return f"Jobs{which}{named} in {where}, {self.end} first"

    def pages(self, store: SqsJobStore, *, every: bool) -> Iterator[JobPage]:
        """The first page, or with ``every`` each page in turn until the last.

        The queue is checked and the first page read before this returns, so a refusal
        comes before anything is printed (``--json`` output never starts and breaks off).
        """
        if self.queue is not None and self.queue not in store.queue_urls:
            raise usage_error(
                f"Queue {self.queue!r} is not one of this store's queues "
                f"({', '.join(sorted(store.queue_urls))})"
            )
        return self._following(store, self._page(store, None), every=every)

    def _following(self, store: SqsJobStore, page: JobPage, *, every: bool) -> Iterator[JobPage]:
        yield page
        while every and page.next_cursor is not None:
            page = self._page(store, page.next_cursor)
            yield page

    def _page(self, store: SqsJobStore, cursor: str | None) -> JobPage:
        """A page read through the store's SPI, the one call that takes the order."""
        options = ListOptions(
            queue=self.queue,
            status=self.statuses or None,
            name=self.name,
            tenant=self.tenant,
            limit=self.limit,
            cursor=cursor,
        )
        try:
            filter, limit, cursor = options.query()
            filter = dataclasses.replace(filter, newest_first=self.newest_first)
            return store.sync.list(filter, limit, cursor, time.time())
        except JobConfigError as error:
            raise usage_error(error) from error
