"""Where a store's jobs live: the table, each queue's SQS facts, and the retention periods.

A ``Layout`` is an immutable value the flows read. The store learns each queue's
redrive policy and retention lazily (``flows.describe``, once per queue per store
lifetime), unless ``SqsJobStore.create`` already knew them because it made the queues.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from ...core.errors import JobConfigError
from .index_keys import DEFAULT_SHARDS, IndexedTable
from .items import MOVES_ENDED, RECORD_FORMAT
from .sqs import QueueInfo

NONE: Mapping[str, str] = MappingProxyType({})
NOTHING_DESCRIBED: Mapping[str, QueueInfo] = MappingProxyType({})
# A queue's priority lanes: (lowest priority it carries, SQS queue URL), highest first.
Lanes = tuple[tuple[int, str], ...]
NO_LANES: Mapping[str, Lanes] = MappingProxyType({})


class Layout(NamedTuple):
    table: str
    queue_urls: Mapping[str, str]
    dead_letter_urls: Mapping[str, str] = NONE
    described: Mapping[str, QueueInfo] = NOTHING_DESCRIBED
    retention: float = 86_400.0
    dead_retention: float = 1_209_600.0
    clock_skew: float = 2.0  # how far two hosts' clocks may disagree (``lease_over``)
    resend_after: float = 60.0  # a duplicate enqueue re-sends a message older than this
    lanes: Mapping[str, Lanes] = NO_LANES
    index_shards: int = DEFAULT_SHARDS  # partitions per queue in the list index
    # Whether the table still has the previous layout's ``by_status`` index; None: not
    # known yet (``flows.indexes.has_previous_index`` finds out).
    previous_index: bool | None = None
    # The record format new jobs are written in (``items.RECORD_FORMATS``): 1 while the
    # deployment still runs readers of 0.1 releases, 2 while it runs readers of 0.2.
    record_format: int = RECORD_FORMAT

    @property
    def indexed(self) -> IndexedTable:
        """The table as the builders of status changes take it."""
        return IndexedTable(self.table, self.index_shards, self.record_format >= MOVES_ENDED)

    def url(self, queue: str) -> str:
        try:
            return self.queue_urls[queue]
        except KeyError:
            known = ", ".join(sorted(self.queue_urls)) or "none"
            raise JobConfigError(
                "invalid_option",
                f"Queue {queue!r} has no SQS queue in this store; configured queues: {known}",
            ) from None

    def info(self, queue: str) -> QueueInfo:
        """The queue's facts; a queue not yet described is assumed to have no limits."""
        described = self.described.get(queue)
        if described is not None:
            return described
        return QueueInfo(self.url(queue), self.dead_letter_urls.get(queue), None)

    def lane_url(self, queue: str, priority: int) -> str | None:
        """The lane a job of ``priority`` also goes to, besides its queue; ``None``: none.

        Every job's message goes to the queue itself, so an idle worker needs to listen
        there only; a job in a lane's band sends a second copy to the lane, which a
        busy worker reads first.
        """
        for lowest, url in self.lanes.get(queue, ()):
            if priority >= lowest:
                return url
        return None

    def via(self, queue: str, url: str) -> Layout:
        """This layout as seen by messages of one of ``queue``'s lanes.

        A lane shares its queue's DLQ, receive limit and retention, so the flows that
        hide, delete or dead-letter a lane's messages read the queue's facts with the
        lane's URL.
        """
        if url == self.url(queue):
            return self
        info = self.info(queue)._replace(url=url)
        return self._replace(
            queue_urls={**self.queue_urls, queue: url}, described={**self.described, queue: info}
        )

    def with_info(self, queue: str, info: QueueInfo) -> Layout:
        return self._replace(described={**self.described, queue: info})

    def known_dead_letter_urls(self) -> dict[str, str]:
        """Each queue's DLQ as far as known: given, or learned from its redrive policy."""
        urls = {q: self.info(q).dead_letter_url for q in sorted(self.queue_urls)}
        return {queue: url for queue, url in urls.items() if url}
