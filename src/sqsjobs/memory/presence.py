"""The memory store's presence records (``core.presence``): the workers of this process.

A ``MemoryJobStore`` lives in one process, so its workers are that process's
``JobWorker``s, perhaps on several event loops or threads: the records sit behind a lock
of their own, apart from the job records' (a presence write never waits on a claim).
A record is replaced whole by each write and judged by its ``expires_at`` when read, as
the SQS store's are; records that ran out are dropped when the next write comes, and a
clean stop removes its own at once.
"""

from __future__ import annotations

import threading

from ..core.presence import WorkerPresence


class MemoryPresence:
    """Presence records by worker id, under one lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, WorkerPresence] = {}

    def put(self, presence: WorkerPresence) -> None:
        with self._lock:
            now = presence.heartbeat_at.timestamp()
            self._records = {
                worker_id: kept
                for worker_id, kept in self._records.items()
                if kept.alive(now) and worker_id != presence.worker_id
            }
            self._records[presence.worker_id] = presence

    def end(self, worker_id: str, now: float) -> None:
        """The record is removed: gone for every reader from ``now`` on."""
        with self._lock:
            self._records.pop(worker_id, None)

    def alive(self, now: float) -> list[WorkerPresence]:
        """The records that have not run out by ``now``, by worker id."""
        with self._lock:
            kept = list(self._records.values())
        return sorted((p for p in kept if p.alive(now)), key=lambda p: p.worker_id)
