"""A worker's own presence record (``core.presence``): written at start, then every 30 s.

``JobWorker`` runs ``keep`` as one of its background tasks and ``end``s the record when it
stops; the Lambda handler, which has no timer between invocations, calls ``invoked`` at
each invocation with records, which writes when the last write is older than the
interval, so an execution environment that is invoked keeps its record and one that is
not (idle, frozen, or gone) lets it run out. Claims are noted as they happen
(``claimed``) and go out with the next write, so a busy worker writes no more often.

Presence is for operators, never for the jobs: a store without presence records
(``PresenceStore``) is simply not written to, and a write that fails (the store is
unreachable, the role may not write the item) never stops or slows a worker. The first
failure of an outage is logged at WARNING, the rest of it at DEBUG, and the write that
succeeds again says so at INFO.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable, Iterable
from typing import Any

from .. import __version__
from ..core.errors import describe_error
from ..core.presence import PRESENCE_INTERVAL, PRESENCE_TTL, WorkerPresence
from ..core.store import PresenceStore
from ..core.times import utc
from ..observe.log import Event, log_event
from .run import RunSettings


class Presence:
    """The presence record of one worker, and the writes that keep it."""

    def __init__(
        self,
        settings: RunSettings,
        queues: Iterable[str],
        concurrency: int,
        *,
        interval: float = PRESENCE_INTERVAL,
    ) -> None:
        """The record of the worker ``settings`` run for (its store, registry, clock and
        logger), claiming from ``queues`` (more are added as claims name them)."""
        store = settings.store
        self._store = store if isinstance(store, PresenceStore) else None
        self.worker_id = settings.worker_id
        self.queues = tuple(queues)
        self._names = tuple(sorted(settings.registry))
        self._concurrency = concurrency
        self._clock = settings.clock
        self._logger = settings.logger
        self.interval = interval
        self._host = socket.gethostname()
        self._started: float | None = None
        self._written: float | None = None  # when the last write was made, or tried
        self._claims: dict[str, float] = {}
        self._failing = False

    def claimed(self, queue: str, now: float) -> None:
        """Note a claim from ``queue``; the next write carries it."""
        self._claims[queue] = now
        if queue not in self.queues:  # the Lambda handler learns its queues from events
            self.queues += (queue,)

    def record(self, running: int, now: float) -> WorkerPresence:
        """The record as a write at ``now`` puts it."""
        if self._started is None:
            self._started = now
        return WorkerPresence(
            worker_id=self.worker_id,
            host=self._host,
            pid=os.getpid(),
            version=__version__,
            queues=self.queues,
            names=self._names,
            concurrency=self._concurrency,
            running=running,
            started_at=utc(self._started),
            heartbeat_at=utc(now),
            expires_at=utc(now + PRESENCE_TTL),
            last_claims={queue: utc(at) for queue, at in self._claims.items()},
        )

    async def beat(self, running: int) -> None:
        """Write the record now; a failure is logged, never raised."""
        if self._store is None:
            return
        now = self._clock()
        self._written = now
        try:
            await self._store.put_presence(self.record(running, now))
        except Exception as error:
            self._failed("write", error)
        else:
            self._recovered()

    def due(self, now: float) -> bool:
        """Whether the last write is older than the interval (or there was none)."""
        return self._written is None or now - self._written >= self.interval

    async def beat_if_due(self, running: int) -> None:
        if self._store is not None and self.due(self._clock()):
            await self.beat(running)

    def invoked(self, queues: Iterable[str], running: int) -> asyncio.Future[None]:
        """A Lambda invocation with records from ``queues``: their claims noted, and the
        record written if due, in the background (await the result before returning).
        An invocation with no record to run (an empty or wholly skipped event) does
        nothing, this included."""
        return asyncio.ensure_future(self._invoked(list(queues), running))

    async def _invoked(self, queues: list[str], running: int) -> None:
        if not queues:
            return
        now = self._clock()
        for queue in queues:
            self.claimed(queue, now)
        await self.beat_if_due(running)

    async def keep(self, running: Callable[[], int]) -> None:
        """Write at once, then every ``interval`` until cancelled (``JobWorker``'s task)."""
        while True:
            await self.beat(running())
            await asyncio.sleep(self.interval)

    async def end(self) -> None:
        """A clean stop: the record runs out now, for every reader."""
        if self._store is None or self._written is None:
            return
        try:
            await self._store.end_presence(self.worker_id, self._clock())
        except Exception as error:
            self._failed("end", error)

    def _failed(self, what: str, error: Exception) -> None:
        first = not self._failing
        self._failing = True
        self._log(
            logging.WARNING if first else logging.DEBUG,
            f"Could not {what} the presence record of worker {self.worker_id} "
            f"({describe_error(error)}); jobs run on, but `sqsjobs workers` and the "
            "dashboard may not show this worker"
            + ("" if first else " (still failing)")
            + (f"; trying again in {self.interval:g}s" if what == "write" else ""),
            error=describe_error(error),
        )

    def _recovered(self) -> None:
        if self._failing:
            self._failing = False
            self._log(
                logging.INFO, f"The presence record of worker {self.worker_id} is written again"
            )

    def _log(self, level: int, message: str, **extra: Any) -> None:
        log_event(self._logger, level, Event.PRESENCE, message, worker_id=self.worker_id, **extra)
