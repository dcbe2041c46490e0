"""What a conformance test gets: a store, the clock it judges time by, and a way to let time pass.

The memory store runs on a fake clock that ``advance`` moves at once. A store whose
timers are real (SQS visibility and delays) runs on the real clock, and ``advance``
sleeps; tests therefore keep durations short (leases and delays of a second or two).
Every harness offers the queues ``default`` and ``other``, and its store keeps terminal
records for ``RETENTION`` seconds (``DEAD_RETENTION`` for dead ones).

The producer operations (put, put_many, get, cancel, list) and the calls both stores
have beyond them (retry, redrive, the presence records) also have a blocking face, the
store's ``sync``. A test module, or a test, marked ``BOTH_FACES`` runs once more with
those calls taken through it (``ThroughBlockingFace``); the rest stay async.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import pytest

from sqsjobs import EnqueueResult, Job, JobFilter, JobPage, JobStore, SyncJobStore
from sqsjobs.core.presence import WorkerPresence
from sqsjobs.core.reports import RedriveProgress, RedriveReport

from .capabilities import SyncPresenceStore, SyncRedriveStore, SyncRetryStore

QUEUES = ("default", "other")
# Every harness builds its store with these, so retention tests need only a short wait.
# On a real clock the readers' own requests take time (a loaded emulator can spend a
# second on one check), so the windows leave seconds of room on either side.
RETENTION = 4.0
DEAD_RETENTION = 8.0

FACES = ("async", "blocking")
BOTH_FACES = pytest.mark.parametrize("face", FACES, indirect=True)


@dataclass
class Harness:
    kind: str
    store: JobStore
    clock: Callable[[], float]
    advance_clock: Callable[[float], object]
    # ``async with harness.claim_waiting(): <start a claim with wait>`` ends once the
    # store waits in that claim, so what the test does next happens while it waits.
    claim_waiting: Callable[[], AbstractAsyncContextManager[None]]

    def now(self) -> float:
        return self.clock()

    async def advance(self, seconds: float) -> None:
        result = self.advance_clock(seconds)
        if hasattr(result, "__await__"):
            await result  # type: ignore[misc]

    def through_blocking_face(self) -> Harness:
        return dataclasses.replace(
            self, kind=f"{self.kind}-blocking", store=ThroughBlockingFace(self.store)
        )


class ThroughBlockingFace:
    """``store`` with put, put_many, get, cancel and list taken through its blocking face,
    called from a thread as a producer outside the event loop calls them."""

    def __init__(self, store: JobStore) -> None:
        self._store = store
        blocking = getattr(store, "sync", None)  # a store's own face, not the generic fallback
        assert blocking is not None, f"{type(store).__name__} has no blocking face"
        self._blocking: SyncJobStore = blocking

    async def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        return await asyncio.to_thread(self._blocking.put, job, fingerprint)

    async def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        return await asyncio.to_thread(self._blocking.put_many, items)

    async def get(self, job_id: str, now: float) -> Job | None:
        return await asyncio.to_thread(self._blocking.get, job_id, now)

    async def cancel(self, job_id: str, now: float, *, by: str | None = None) -> bool:
        blocking: Any = self._blocking  # the stores' own faces take ``by``
        return await asyncio.to_thread(lambda: blocking.cancel(job_id, now, by=by))

    async def claim(
        self, queue: str, worker_id: str, now: float, *, limit: int = 1, wait: float = 0.0
    ) -> list[Job]:
        return await self._store.claim(queue, worker_id, now, limit=limit, wait=wait)

    async def heartbeat(
        self, job_id: str, lease_token: str, lease_until: float, now: float
    ) -> bool:
        return await self._store.heartbeat(job_id, lease_token, lease_until, now)

    async def complete(self, job_id: str, lease_token: str, now: float, result: Any) -> bool:
        return await self._store.complete(job_id, lease_token, now, result)

    async def fail(
        self, job_id: str, lease_token: str, error: str, retry_at: float | None, now: float
    ) -> bool:
        return await self._store.fail(job_id, lease_token, error, retry_at, now)

    async def release(
        self, job_id: str, lease_token: str, error: str, now: float, *, run_at: float | None = None
    ) -> bool:
        return await self._store.release(job_id, lease_token, error, now, run_at=run_at)

    async def retry(self, job_id: str, now: float, *, by: str | None = None) -> bool:
        blocking: Any = self._blocking
        assert isinstance(blocking, SyncRetryStore)
        return await asyncio.to_thread(lambda: blocking.retry(job_id, now, by=by))

    async def redrive(
        self,
        queue: str | None = None,
        *,
        limit: int | None = None,
        on_progress: RedriveProgress | None = None,
        name: str | None = None,
        by: str | None = None,
    ) -> RedriveReport:
        blocking: Any = self._blocking
        assert isinstance(blocking, SyncRedriveStore)
        return await asyncio.to_thread(
            lambda: blocking.redrive(queue, limit=limit, on_progress=on_progress, name=name, by=by)
        )

    async def put_presence(self, presence: WorkerPresence) -> None:
        blocking: Any = self._blocking
        assert isinstance(blocking, SyncPresenceStore)
        await asyncio.to_thread(blocking.put_presence, presence)

    async def end_presence(self, worker_id: str, now: float) -> None:
        blocking: Any = self._blocking
        assert isinstance(blocking, SyncPresenceStore)
        await asyncio.to_thread(blocking.end_presence, worker_id, now)

    async def presences(self, now: float) -> list[WorkerPresence]:
        blocking: Any = self._blocking
        assert isinstance(blocking, SyncPresenceStore)
        found: list[WorkerPresence] = await asyncio.to_thread(blocking.presences, now)
        return found

    async def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        return await asyncio.to_thread(self._blocking.list, filter, limit, cursor, now)
