"""The claim loop of a ``JobWorker``: claim as many jobs as it has free slots, and start them.

With several queues it first sweeps them in list order without waiting, so a runnable
job in an earlier queue is claimed before any in a later one; when that finds nothing it
long-polls every queue at once and releases (without spending an attempt) whatever
arrives beyond its free slots. A store error while claiming is logged and retried with
backoff; it never ends the worker. Written here, as a base of ``JobWorker``, so the
worker's module keeps to its construction, its lifecycle and its runs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.backoff import Backoff
from ..core.errors import describe_error
from ..core.models import Job
from ..observe.log import Event

if TYPE_CHECKING:
    from ..producer.queue import JobQueue

LONG_POLL = 20.0  # seconds a claim may wait for work; stores cap it at what they support
CLAIM_RETRY = Backoff(base=0.5, max=30.0)


class ClaimLoop:
    """The claiming half of ``JobWorker``: it starts what it claims with ``_start``."""

    worker_id: str
    _queue: JobQueue
    _queues: tuple[str, ...]
    _concurrency: int
    _poll_interval: float
    _clock: Callable[[], float]
    _busy: int
    _stopping: bool
    _slot_freed: asyncio.Event
    _polls: dict[str, asyncio.Future[int]]

    if TYPE_CHECKING:

        def _start(self, job: Job) -> asyncio.Task[None]: ...

        def _log(
            self, level: int, event: Event, message: str, job: Job | None = None, **extra: Any
        ) -> None: ...

    async def _serve(self) -> None:
        failures = 0
        while not self._stopping:
            await self._wait_for_slot()
            if self._stopping:
                return
            try:
                await self._claim_round()
                failures = 0
            except Exception as error:
                failures += 1
                delay = max(self._poll_interval, CLAIM_RETRY.delay(failures))
                self._log(
                    logging.ERROR,
                    Event.CLAIM_FAILED,
                    f"Claim failed ({describe_error(error)}); retrying in {delay:.2f}s",
                    error=describe_error(error),
                )
                await asyncio.sleep(delay)

    async def _claim_round(self) -> None:
        if len(self._queues) > 1 and await self._sweep():
            return
        started = time.monotonic()
        if await self._long_poll() == 0:
            # A store without long polling answers at once: pace it at poll_interval.
            idle = self._poll_interval - (time.monotonic() - started)
            if idle > 0:
                await asyncio.sleep(idle)

    async def _sweep(self) -> int:
        """Claim without waiting, earlier queues first; the number of jobs started."""
        started = 0
        for queue in self._queues:
            free = self._free()
            if free == 0:
                break
            jobs = await self._queue.store.claim(queue, self.worker_id, self._clock(), limit=free)
            for job in jobs:
                self._start(job)
            started += len(jobs)
        return started

    async def _long_poll(self) -> int:
        """Wait on every queue at once; the number of jobs started by the polls that ended."""
        for queue in self._queues:
            if queue not in self._polls:
                self._polls[queue] = asyncio.ensure_future(self._poll(queue, self._free()))
        done, _ = await asyncio.wait(self._polls.values(), return_when=asyncio.FIRST_COMPLETED)
        for queue in [q for q, task in self._polls.items() if task in done]:
            del self._polls[queue]
        failures = [task.exception() for task in done if task.exception() is not None]
        if failures:
            raise failures[0]  # type: ignore[misc]
        return sum(task.result() for task in done)

    async def _poll(self, queue: str, limit: int) -> int:
        """One long poll; what it brings is started or released at once, never left waiting."""
        jobs = await self._queue.store.claim(
            queue, self.worker_id, self._clock(), limit=limit, wait=LONG_POLL
        )
        started = 0
        for job in jobs:
            if self._free() > 0 and not self._stopping:
                self._start(job)
                started += 1
            else:
                await self._give_back(job)
        return started

    async def _give_back(self, job: Job) -> None:
        assert job.lease_token is not None
        if await self._queue.store.release(job.id, job.lease_token, "no free slot", self._clock()):
            self._log(
                logging.DEBUG,
                Event.RELEASED,
                f"Released job {job.id}: claimed by a long poll with no free slot",
                job,
            )

    def _free(self) -> int:
        return self._concurrency - self._busy

    async def _wait_for_slot(self) -> None:
        while self._free() <= 0 and not self._stopping:
            self._slot_freed.clear()
            await self._slot_freed.wait()
