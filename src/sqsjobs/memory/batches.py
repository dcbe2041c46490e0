"""Batches in the memory store: its jobs' ends counted, its callbacks released once.

``put_batch`` writes a batch's jobs and its callbacks (waiting for the batch) under one
lock, and keeps what the batch is: its jobs and how each ended. Every status change
goes through ``MemoryCore._move_to``, which calls ``after_move``: a job of the batch that
ends is counted, once (its first end: a dead job retried later runs, but the batch has
counted it dead), and the change that ends the batch's last job releases
``on_complete`` and, if every job completed, ``on_success`` (else cancels it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core import history
from ..core.batches import ON_SUCCESS, BatchStatus, batch_callback_error, batch_tenant
from ..core.errors import JobConfigError
from ..core.history import action_entry
from ..core.lifecycle import CANCELLED, COMPLETED, DEAD, TERMINAL, WAITING, initial_status
from ..core.models import Job, JobStatus
from ..core.requests import EnqueueResult
from .dependencies import DependencyRules
from .record import Record


@dataclass
class _Batch:
    jobs: list[str]
    callbacks: dict[str, str]  # role -> callback job id
    tenant: str | None
    ended: dict[str, JobStatus] = field(default_factory=dict)  # job id -> how it ended
    done: bool = False

    def status(self, batch_id: str) -> BatchStatus:
        outcomes = list(self.ended.values())
        completed, dead = outcomes.count(COMPLETED), outcomes.count(DEAD)
        cancelled = outcomes.count(CANCELLED)
        total = len(self.jobs)
        callbacks = tuple(self.callbacks.values())
        open_ = total - len(self.ended)
        return BatchStatus(
            batch_id, total, completed, dead, cancelled, open_, callbacks, self.tenant
        )


class BatchRules(DependencyRules):
    """The batches' side of a ``MemoryCore``: a base of it, under its lock."""

    capacity: int

    def __init__(self) -> None:
        super().__init__()
        self.batches: dict[str, _Batch] = {}

    if TYPE_CHECKING:

        def _put(self, job: Job, fingerprint: str | None, now: float) -> EnqueueResult: ...

        def _purge(self, now: float) -> None: ...

    def put_batch(
        self, batch_id: str, jobs: Sequence[Job], callbacks: Sequence[Job], now: float
    ) -> None:
        """Write a batch's jobs and callbacks, all or (at capacity) none."""
        needed = len(jobs) + len(callbacks)
        if len(self.records) + needed > self.capacity:
            self._purge(now)
        if len(self.records) + needed > self.capacity:
            raise JobConfigError(
                "store_full",
                f"MemoryJobStore has room for {self.capacity - len(self.records)} more jobs, "
                f"not the {needed} of this batch; nothing was written",
            )
        self.batches[batch_id] = _Batch(
            [job.id for job in jobs],
            {job.batch_callback or "": job.id for job in callbacks},
            batch_tenant([*jobs, *callbacks]),
        )
        for job in [*jobs, *callbacks]:
            self._put(job, None, now)

    def batch_status(self, batch_id: str) -> BatchStatus | None:
        batch = self.batches.get(batch_id)
        return None if batch is None else batch.status(batch_id)

    def after_move(self, record: Record, status: JobStatus, now: float) -> None:
        """A record changed status: settle its children, and count it in its batch."""
        if status in TERMINAL:
            self.ended(record, now)
        batch = self.batches.get(record.batch_id or "")
        if batch is None or record.batch_callback is not None or status not in TERMINAL:
            return
        if record.id in batch.ended:
            return  # its first end is the one counted, as ``SqsJobStore`` counts it
        batch.ended[record.id] = status
        if len(batch.ended) == len(batch.jobs) and not batch.done:
            batch.done = True
            self._end_batch(record.batch_id or "", batch, now)

    def _end_batch(self, batch_id: str, batch: _Batch, now: float) -> None:
        status = batch.status(batch_id)
        for role, callback_id in batch.callbacks.items():
            callback = self.records.get(callback_id)
            if callback is None or callback.status is not WAITING:
                continue  # cancelled meanwhile, or gone
            if role == ON_SUCCESS and not status.succeeded:
                callback.last_error = batch_callback_error(status)
                entry = action_entry(now, history.CANCEL, history.CANCELLED, f"batch {batch_id}")
                callback.note(entry)
                self._move_to(callback, CANCELLED, now)
            else:
                self._move_to(callback, initial_status(callback.run_at, now), now)
