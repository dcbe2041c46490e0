"""The store SPI: what a backend implements so queues and workers can use it.

``JobStore`` is the async contract the worker and ``JobQueue`` speak. ``SyncJobStore`` is
the producer subset, blocking, for ``SyncJobQueue``; a store offers it as its ``sync``
attribute (``MemoryJobStore`` and ``SqsJobStore`` do). A custom store that only has the
async face still works with ``SyncJobQueue``: each call then runs on a private event loop.

Times are epoch seconds from the caller's clock; the store never reads a clock of its
own for decisions a caller passed ``now`` for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ._models import Job

if TYPE_CHECKING:
    from ._requests import EnqueueResult, JobFilter, JobPage


@runtime_checkable
class JobStore(Protocol):
    async def put(self, job: Job, fingerprint: str | None) -> EnqueueResult: ...

    async def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]: ...

    async def claim(
        self, queue: str, worker_id: str, now: float, *, limit: int = 1, wait: float = 0.0
    ) -> list[Job]: ...

    async def heartbeat(
        self, job_id: str, lease_token: str, lease_until: float, now: float
    ) -> bool: ...

    async def complete(self, job_id: str, lease_token: str, now: float, result: Any) -> bool: ...

    async def fail(
        self, job_id: str, lease_token: str, error: str, retry_at: float | None, now: float
    ) -> bool: ...

    async def release(self, job_id: str, lease_token: str, error: str, now: float) -> bool: ...

    async def cancel(self, job_id: str, now: float) -> bool: ...

    async def get(self, job_id: str, now: float) -> Job | None: ...

    async def list(
        self, filter: JobFilter, limit: int, cursor: str | None, now: float
    ) -> JobPage: ...


class SyncJobStore(Protocol):
    def put(self, job: Job, fingerprint: str | None) -> EnqueueResult: ...

    def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]: ...

    def get(self, job_id: str, now: float) -> Job | None: ...

    def cancel(self, job_id: str, now: float) -> bool: ...

    def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage: ...


class _BlockingFace:
    """``SyncJobStore`` over a store that only has the async face: one loop per call."""

    def __init__(self, store: JobStore) -> None:
        self._store = store

    def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        return asyncio.run(self._store.put(job, fingerprint))

    def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        return asyncio.run(self._store.put_many(items))

    def get(self, job_id: str, now: float) -> Job | None:
        return asyncio.run(self._store.get(job_id, now))

    def cancel(self, job_id: str, now: float) -> bool:
        return asyncio.run(self._store.cancel(job_id, now))

    def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        return asyncio.run(self._store.list(filter, limit, cursor, now))


def sync_face(store: Any) -> SyncJobStore:
    """The blocking face of ``store``: its own ``sync`` view if it has one."""
    view = getattr(store, "sync", None)
    if view is not None:
        return view  # type: ignore[no-any-return]
    return _BlockingFace(store)
