"""Debounced jobs in the memory store: one job per ``(queue, tenant, debounce_key)``
until it starts (``enqueue(debounce_key=..., debounce=...)``).

An enqueue whose key names a job that has not started replaces that job's payload and
moves its ``run_at`` to its own (now plus ``debounce``): a burst runs once, with the
last payload, ``debounce`` seconds after its last enqueue. Once the job has started (or
ended unstarted, cancelled), the key names nothing, and the next enqueue is a new job.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..core.lifecycle import DELAYED, QUEUED
from ..core.models import Job
from ..core.requests import EnqueueResult
from ..core.times import epoch
from ..core.validation import dump_json

if TYPE_CHECKING:
    from .record import Record

Scope = tuple[str, str | None, str]  # queue, tenant, debounce key


class DebounceRules:
    """The debounce keys' side of a ``MemoryCore``: a base of it, under its lock."""

    lock: threading.Lock
    records: dict[str, Record]

    def __init__(self) -> None:
        super().__init__()
        self.debounce_slots: dict[Scope, str] = {}

    if TYPE_CHECKING:

        def _index(self, record: Record) -> None: ...

    def debounced(self, job: Job, now: float) -> EnqueueResult | None:
        """The job ``job``'s key names, if it has not started: given ``job``'s payload
        and ``run_at``, as a duplicate. ``None``: ``job`` is to be written."""
        assert job.debounce_key is not None
        scope = (job.queue, job.tenant, job.debounce_key)
        record = self.records.get(self.debounce_slots.get(scope, ""))
        if record is None or not _unstarted(record):
            self.debounce_slots.pop(scope, None)
            return None
        record.payload_json = dump_json(job.payload)
        record.run_at = epoch(job.run_at)
        record.status = DELAYED
        record.updated_at = now
        self._index(record)
        return EnqueueResult(record.to_job(), duplicate=True)

    def hold_key(self, record: Record) -> None:
        """A new debounced job takes its key."""
        if record.debounce_key is not None:
            self.debounce_slots[(record.queue, record.tenant, record.debounce_key)] = record.id

    def free_key(self, record: Record) -> None:
        """A record dropped (past its retention) frees its key, if it still held it."""
        if record.debounce_key is not None:
            scope = (record.queue, record.tenant, record.debounce_key)
            if self.debounce_slots.get(scope) == record.id:
                del self.debounce_slots[scope]


def _unstarted(record: Record) -> bool:
    return record.status in (QUEUED, DELAYED) and record.started_at is None and not record.attempts
