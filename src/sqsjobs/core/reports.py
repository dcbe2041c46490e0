"""What the operator's calls answer: counts, dead letters, redrives and reconciler passes.

Store-neutral values, apart from any store: the SPI (``store``) names them, a store
answers with them, and the dashboard and the CLI read them whichever store they got.
``sqsjobs.aws`` re-exports them where they were first published.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from .models import Job, JobStatus


@dataclass(frozen=True)
class QueueStats:
    """One queue: its jobs by status (every status, zeros too) and its SQS depths."""

    queue: str
    counts: Mapping[JobStatus, int]
    messages: int  # visible now
    in_flight: int  # received and neither deleted nor visible again yet
    delayed: int  # sent with a delay that has not yet passed
    dead_letter_messages: int | None  # visible in its DLQ; None: the queue has none
    # Terminal statuses count the jobs created since then that ended; None: every job
    # the store keeps (a store whose count costs nothing per job kept).
    ended_since: datetime | None = None
    # Who serves it, from the workers' presence records (``core.presence``): the alive
    # workers that claim from it (None: the store keeps no presence records), when one
    # of them last claimed from it, and the job names they have handlers for.
    workers: int | None = None
    last_claim_at: datetime | None = None
    served_names: frozenset[str] = frozenset()
    # Jobs not started yet (queued or delayed) by job name, and when the queued job due
    # first became due (None: nothing queued).
    waiting_names: Mapping[str, int] = field(default_factory=dict)
    oldest_queued_at: datetime | None = None

    @property
    def unserved_names(self) -> dict[str, int]:
        """Waiting jobs by name, for the names no alive worker of the queue serves: a
        typo, or a handler not deployed. Empty when the store keeps no presence records."""
        if self.workers is None:
            return {}
        return {n: c for n, c in self.waiting_names.items() if n not in self.served_names}


@dataclass(frozen=True)
class DeadLetter:
    """A message in a queue's DLQ, and the job it names as its record now stands.

    ``job_id`` is ``None`` when the body is not a delivery token for ``queue`` (a foreign
    or corrupt message), ``job`` when no live record has that id. ``receive_count`` is
    SQS's, earlier peeks included; ``sent_at`` is the first send to the job queue, since
    a DLQ keeps the original message's timestamp (a copy the store sent keeps its own).
    """

    queue: str
    message_id: str
    job_id: str | None
    job: Job | None
    receive_count: int
    sent_at: datetime


@dataclass(frozen=True)
class RedriveReport:
    """What a redrive did with each DLQ message it took (see ``flows.redrive``)."""

    redriven: int  # sent back to its job queue (a dead job first revived), then deleted
    discarded: int  # deleted: its job finished, is gone, or was already sent back
    skipped: int  # left in the DLQ: not a delivery token for its queue, or not sent back
    passed_over: int = 0  # left in the DLQ untouched: not the job of the ``name`` asked for

    @property
    def total(self) -> int:
        """The messages the redrive acted on; those ``passed_over`` are not among them."""
        return self.redriven + self.discarded + self.skipped


@dataclass(frozen=True)
class ReconcileReport:
    """What one pass did: messages re-sent, jobs dead-lettered after a redrive, dead jobs
    whose missing DLQ copy it sent, and waiting jobs whose parents had ended that it
    released or cancelled."""

    resent: int
    dead: int
    copied: int = 0
    settled: int = 0


RedriveProgress = Callable[[RedriveReport], None]
"""A redrive's ``on_progress``: called with the report so far after each batch of messages."""
