"""``dlq list`` as it reads by default: the dead jobs from their records, no message touched.

Receiving a DLQ message raises its ``ApproximateReceiveCount``, even when it is handed
straight back, and operators read that count as deliveries: a listing that received
them would change what it shows each time it is run. So the dead jobs are the first
page of ``jobs list --status dead`` (``Listing``, the same path, newest first), and each
queue's DLQ is only counted (``GetQueueAttributes``, which reads no message).

A DLQ may hold more messages than there are dead jobs listed for it: originals its
queue's redrive policy moved after runs that kept dying before they could record
anything (the reconciler records those dead on its next pass), or bodies that are not
jobs at all. The count line says how many, and ``dlq list --peek`` shows them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console, RenderableType
from rich.padding import Padding
from rich.text import Text

from .. import JobConfigError, JobPage
from ._errors import usage_error
from ._listing import Listing
from ._render import dead_job_table, job_record, literal

if TYPE_CHECKING:
    from ..aws import SqsJobStore


@dataclass(frozen=True)
class DeadJobs:
    """The first page of dead jobs and the depth of each listed queue's DLQ."""

    listing: Listing
    page: JobPage
    depths: dict[str, int]  # queues without a DLQ are left out

    @property
    def cut_short(self) -> bool:
        """Whether ``--limit`` (or the page's read budget) left dead jobs unlisted."""
        return self.page.next_cursor is not None


def read(store: SqsJobStore, queue: str | None, name: str | None, limit: int) -> DeadJobs:
    """The depths first: they refuse a queue the store lacks with the store's own words,
    before anything of the table is read."""
    try:
        depths = store.sync.dead_letter_depths(None if queue is None else [queue])
    except JobConfigError as error:
        raise usage_error(error) from error
    listing = Listing.build(queue, ("dead",), name, None, limit, newest=True)
    return DeadJobs(listing, next(listing.pages(store, every=False)), depths)


def json_records(dead: DeadJobs) -> Iterator[dict[str, Any]]:
    """The objects ``--peek --json`` writes, with what only a received message tells
    (its id, receive count, when it was sent) left null, so scripts keep their keys."""
    for job in dead.page.jobs:
        yield {
            "queue": job.queue,
            "message_id": None,
            "job_id": job.id,
            "receive_count": None,
            "sent_at": None,
            "job": job_record(job),
        }


def show(dead: DeadJobs, console: Console) -> None:
    jobs = dead.page.jobs
    console.print(dead_job_table(f"{dead.listing.title()} ({len(jobs)})", jobs))
    if dead.cut_short:
        console.print(
            f"Showing the newest {len(jobs)}; raise --limit (up to 1000), or list every one "
            "with `sqsjobs jobs list --status dead --all`."
        )
    for part in depth_parts(dead):
        console.print(part)


def depth_parts(dead: DeadJobs) -> Iterator[RenderableType]:
    """Per queue with a DLQ, how many messages it holds, and how many of them no dead job
    listed accounts for, when the listing is whole enough to tell."""
    listed = Counter(job.queue for job in dead.page.jobs)
    for queue, depth in sorted(dead.depths.items()):
        line = f"Dead-letter queue of {queue}: {depth} message(s)"
        if dead.listing.name is not None:  # the depth counts every handler's messages
            yield literal(f"{line}, of every handler's jobs")
            continue
        yield literal(line)
        unrecorded = depth - listed[queue]
        if unrecorded > 0 and not dead.cut_short:
            yield Padding(Text(unrecorded_text(unrecorded)), (0, 0, 0, 2))


def unrecorded_text(count: int) -> str:
    return (
        f"{count} of them not a recorded dead job: a run that kept dying before it could "
        "record anything, moved there by the queue's redrive policy (the reconciler records "
        "it dead on its next pass), or a message that is not a job. `sqsjobs dlq list "
        "--peek` shows them, raising each one's receive count by one."
    )
