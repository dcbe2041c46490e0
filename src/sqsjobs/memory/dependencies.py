"""Parents and children in the memory store: when a waiting job runs, or never does.

A job put with ``after`` waits (status ``waiting``) for each parent that has not
completed; its record keeps those in ``awaiting``, and each such parent names it among
its ``children`` (kept, and shown as ``Job.children``). Every status change goes through
``MemoryCore._move_to``, which tells ``ended`` about a job that ended: a completed parent
crosses itself off its children's ``awaiting`` and releases those left waiting for
nothing (queued, or delayed until their ``run_at``); a dead or cancelled one cancels
them, and their own children after them. One lock covers it all, so a child is released
exactly once however its parents end.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from ..core import history
from ..core.fields import may_wait_for, unknown_parent
from ..core.history import action_entry
from ..core.lifecycle import (
    CANCELLED,
    COMPLETED,
    FAILS_CHILDREN,
    WAITING,
    initial_status,
    parent_ended_error,
)
from ..core.models import Job, JobStatus
from .record import Record


class DependencyRules:
    """The parents' side of a ``MemoryCore``: a base of it, under its lock."""

    records: dict[str, Record]

    if TYPE_CHECKING:

        def _live(self, job_id: str, now: float) -> Record | None: ...

        def _move_to(self, record: Record, status: JobStatus, now: float) -> None: ...

    def __init__(self) -> None:
        super().__init__()  # the next rules of the core (``PauseRules``)
        self._ended_jobs: deque[str] = deque()
        self._settling = False

    def known_parents(self, job: Job, now: float) -> list[Record]:
        """The records of ``job``'s parents; an id with none is ``JobConfigError`` before
        anything is written."""
        parents: list[Record] = []
        for parent_id in job.after:
            parent = self._live(parent_id, now)
            if parent is None or not may_wait_for(job.tenant, parent.tenant):
                raise unknown_parent(parent_id)
            parents.append(parent)
        return parents

    def wait_for(self, record: Record, parents: list[Record], now: float) -> None:
        """Link a new waiting record to its parents; those that ended already settle it."""
        record.awaiting = set()
        for parent in parents:
            if parent.status in FAILS_CHILDREN:
                self._cancel_child(record, parent, now)
                return
            if parent.status is not COMPLETED:
                record.awaiting.add(parent.id)
                parent.children.add(record.id)
        if not record.awaiting:
            self._move_to(record, initial_status(record.run_at, now), now)

    def ended(self, record: Record, now: float) -> None:
        """``record`` ended: settle its waiting children, and theirs in turn (a worklist,
        not recursion, so a chain of any length is settled)."""
        self._ended_jobs.append(record.id)
        if self._settling:
            return  # the loop below, further up the stack, takes it
        self._settling = True
        try:
            while self._ended_jobs:
                parent = self.records.get(self._ended_jobs.popleft())
                if parent is not None:
                    self._settle_children(parent, now)
        finally:
            self._settling = False

    def _settle_children(self, parent: Record, now: float) -> None:
        for child_id in sorted(parent.children):
            child = self.records.get(child_id)
            if child is None or child.status is not WAITING or parent.id not in child.awaiting:
                continue
            if parent.status is COMPLETED:
                child.awaiting.discard(parent.id)
                if not child.awaiting:
                    self._move_to(child, initial_status(child.run_at, now), now)
            else:
                self._cancel_child(child, parent, now)

    def _cancel_child(self, child: Record, parent: Record, now: float) -> None:
        child.awaiting = set()
        child.last_error = parent_ended_error(parent.id, parent.status)
        child.note(action_entry(now, history.CANCEL, history.CANCELLED, f"parent {parent.id}"))
        self._move_to(child, CANCELLED, now)
