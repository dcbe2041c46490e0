"""Waiting for a serving worker without sleeping: the store and the hooks say what happened.

A test that sleeps "long enough" for the worker to get somewhere is slow when the guess is
generous and flaky when it is not. ``WatchedStore`` is a memory store that records what the
worker asked of it (long polls begun, jobs released) and ``Finished`` is an ``on_complete``
hook that records accepted completions; both wake a test waiting for a condition on what
they saw. The timeout of ``until`` is a safety net, not a measured time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from sqsjobs import Job, MemoryJobStore

SAFETY_NET = 5.0


class Watch:
    """Wakes whoever waits for a condition whenever something was recorded."""

    def __init__(self) -> None:
        self._changed = asyncio.Event()

    def changed(self) -> None:
        self._changed.set()

    async def until(self, predicate: Callable[[], bool], timeout: float = SAFETY_NET) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self._changed.clear()
                await self._changed.wait()


class WatchedStore(MemoryJobStore):
    """A memory store that records the long polls begun (their queues) and the jobs released."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.watch = Watch()
        self.long_polls: list[str] = []
        self.released: list[str] = []

    async def claim(
        self, queue: str, worker_id: str, now: float, *, limit: int = 1, wait: float = 0.0
    ) -> list[Job]:
        if wait > 0:
            self.long_polls.append(queue)
            self.watch.changed()
        return await super().claim(queue, worker_id, now, limit=limit, wait=wait)

    async def release(
        self, job_id: str, lease_token: str, error: str, now: float, *, run_at: float | None = None
    ) -> bool:
        released = await super().release(job_id, lease_token, error, now, run_at=run_at)
        if released:
            self.released.append(job_id)
            self.watch.changed()
        return released


class Finished:
    """An ``on_complete`` hook that records, in order, the ids of the jobs whose completion
    the store accepted; ``all_completed`` waits until every given job completed."""

    def __init__(self) -> None:
        self.watch = Watch()
        self.completed: list[str] = []

    def on_complete(self, job: Job) -> None:
        self.completed.append(job.id)
        self.watch.changed()

    async def all_completed(self, *jobs: Job, timeout: float = SAFETY_NET) -> None:
        wanted = {job.id for job in jobs}
        await self.watch.until(lambda: wanted <= set(self.completed), timeout)
