"""A memory store whose writes after a claim fail as a throttled table's do, and helpers.

Shared by the tests of recording an outcome through a failing store
(``test_settle_retry``) and of stopping while one is pending (``test_settle_stop``).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from sqsjobs import Backoff, JobQueue, JobWorker, MemoryJobStore

from ..support.clock import FakeClock
from .watch import Watch


class Throttled(Exception):
    """What a store call raises when its backend keeps refusing it."""


class Refused(Exception):
    """What an AWS store raises when the request itself is refused: an HTTP 400 that is not
    throttling (botocore's ``ClientError`` carries its answer as ``response``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.response = {
            "Error": {"Code": "ValidationException", "Message": message},
            "ResponseMetadata": {"HTTPStatusCode": 400},
        }


class FlakyWrites(MemoryJobStore):
    """Writes after a claim raise their first ``failures[name]`` times, as a throttled table.

    ``advance`` moves the clock at every failure (time the failed call took). A name in
    ``applied`` has its first failing call take effect before it raises (the response
    lost on the way back). ``recover`` is asked after every heartbeat; once it says so,
    the failures stop. ``refuse_heartbeats`` makes every heartbeat refused. ``invalid``
    makes the failures refusals of the request itself (``Refused``), not throttling.
    """

    def __init__(
        self,
        failures: dict[str, int],
        *,
        clock: Any,
        advance: float = 0.0,
        applied: frozenset[str] = frozenset(),
        recover: Callable[[FlakyWrites], bool] | None = None,
        invalid: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(clock=clock, **options)
        self.failures = Counter(failures)
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.beats: list[bool] = []
        self.refuse_heartbeats = False
        self._advance = advance
        self._applied = set(applied)
        self._recover = recover
        self._clock = clock
        self._invalid = invalid
        self.watch = Watch()

    async def _try(self, name: str, write: Callable[[], Any], *arguments: Any) -> bool:
        self.calls.append((name, arguments))
        self.watch.changed()
        if self.failures[name] <= 0:
            return bool(await write())
        self.failures[name] -= 1
        if name in self._applied:
            self._applied.discard(name)
            await write()  # it took effect; the caller never hears so
        if self._advance:
            self._clock.advance(self._advance)
        if self._invalid:
            raise Refused(f"{name}: Item size has exceeded the maximum allowed size")
        raise Throttled(f"{name}: ProvisionedThroughputExceededException: slow down")

    def tries(self, name: str) -> list[tuple[Any, ...]]:
        return [arguments for called, arguments in self.calls if called == name]

    async def complete(self, job_id: str, lease_token: str, now: float, result: Any) -> bool:
        write = super().complete
        return await self._try(
            "complete", lambda: write(job_id, lease_token, now, result), job_id, lease_token, now
        )

    async def fail(
        self, job_id: str, lease_token: str, error: str, retry_at: float | None, now: float
    ) -> bool:
        write = super().fail
        return await self._try(
            "fail",
            lambda: write(job_id, lease_token, error, retry_at, now),
            job_id,
            lease_token,
            error,
            retry_at,
            now,
        )

    async def release(
        self, job_id: str, lease_token: str, error: str, now: float, *, run_at: float | None = None
    ) -> bool:
        write = super().release
        return await self._try(
            "release",
            lambda: write(job_id, lease_token, error, now, run_at=run_at),
            job_id,
            lease_token,
            error,
            now,
        )

    async def heartbeat(
        self, job_id: str, lease_token: str, lease_until: float, now: float
    ) -> bool:
        held = not self.refuse_heartbeats and await super().heartbeat(
            job_id, lease_token, lease_until, now
        )
        self.beats.append(held)
        if self._recover is not None and self._recover(self):
            self.failures.clear()
        self.watch.changed()
        return held


class Hooks:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def complete(self, job: Any) -> None:
        self.calls.append(("complete", job.id))

    def fail(self, job: Any, error: BaseException, will_retry: bool, delay: Any) -> None:
        self.calls.append(("fail", job.id, will_retry))

    def dead(self, job: Any, error: BaseException) -> None:
        self.calls.append(("dead", job.id))

    def worker(self, queue: JobQueue, handlers: Any, **options: Any) -> JobWorker:
        return JobWorker(
            queue,
            handlers,
            on_complete=self.complete,
            on_fail=self.fail,
            on_dead=self.dead,
            **options,
        )


def events(caplog: pytest.LogCaptureFixture, event: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.__dict__.get("event") == event]


def flaky_env(failures: dict[str, int], **options: Any) -> tuple[FakeClock, FlakyWrites, JobQueue]:
    clock = FakeClock()
    store = FlakyWrites(failures, clock=clock, **options)
    backoff = Backoff(base=1.0, max=8.0, random=lambda: 1.0)
    return clock, store, JobQueue(store, clock=clock, backoff=backoff)
