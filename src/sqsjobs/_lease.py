"""A run's hold on its claimed job: heartbeats, and the outcome's write under the lease.

Recording the outcome (complete, fail or release) is one store write. When the store
call raises (AWS still throttling after the client's own retries, a network failure),
giving up at once would leave the job to the next claim although its handler ran: it
would run twice, or be dead-lettered after a success on its final attempt. So the same
write is tried again with backoff while heartbeats keep the lease held. Repeating it is
safe: the call is the same (its ``now`` fixed) and the store recognises its own lost
first try, so the worst a repeat does is be refused.

    write accepted ──────────────────────────────► WRITTEN
    write refused (another claim's token) ───────► REFUSED
    a heartbeat refused meanwhile ───────────────► LOST      nothing recorded
    still failing when the lease it began in
    ends (or the invocation's deadline comes) ───► UNRECORDED  logged: what the next
                                                               claim will do with it

The bound is the lease as it stood when the write was first tried, in real seconds,
though heartbeats keep extending it: a write the store refuses for good must not hold
a worker's slot forever, and the lease still held when the retries end keeps another
claim from running the job while they go on. The lease as last extended, on the
caller's clock, ends them too if it runs out first (heartbeats failing as well).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from enum import Enum

from ._backoff import Backoff
from ._errors import describe_error
from ._log import Event
from ._models import Job, JobStatus
from ._store import JobStore

WRITE_RETRY = Backoff(base=0.5, max=4.0)  # between tries of a store write that raised
Log = Callable[..., None]  # (level, event, message, **extra), the run's log


class Written(Enum):
    WRITTEN = "written"
    REFUSED = "refused"
    LOST = "lost"
    UNRECORDED = "unrecorded"


class Lease:
    """The lease of one claimed job, as its run holds it."""

    def __init__(
        self,
        job: Job,
        store: JobStore,
        clock: Callable[[], float],
        log: Log,
        *,
        deadline: float | None,
        on_lost: Callable[[], None],
        on_extended: Callable[[float, float], Awaitable[None]] | None = None,
    ) -> None:
        assert job.lease_token is not None, "a claimed job carries its lease token"
        self.job = job
        self.token: str = job.lease_token
        self.store = store
        self.clock = clock
        self.log = log
        self.deadline = deadline  # time.monotonic() of the invocation's deadline, if any
        self.on_lost = on_lost
        self.on_extended = on_extended  # (until, now): what else the run holds for its lease
        self.until = (  # as last extended, on ``clock``
            job.lease_until.timestamp() if job.lease_until is not None else clock() + job.lease
        )
        self.lost = asyncio.Event()  # a heartbeat was refused: another claim owns the job
        self._writing = asyncio.Lock()  # a heartbeat never overlaps the outcome's write

    # -- heartbeats ----------------------------------------------------------------------

    async def keep(self) -> None:
        """Heartbeat every lease/3 until cancelled or refused."""
        interval = self.job.lease / 3
        while await self._sleep_then_beat(interval):
            pass

    async def _sleep_then_beat(self, interval: float) -> bool:
        await asyncio.sleep(interval)
        try:
            return await self.beat()
        except Exception as error:  # a failing store call: the next beat may still succeed
            self.log(
                logging.WARNING,
                Event.HEARTBEAT_FAILED,
                f"Heartbeat for job {self.job.id} failed: {describe_error(error)}",
                error=describe_error(error),
            )
            return True

    async def beat(self) -> bool:
        """Extend the lease now; False (and ``on_lost``) once another claim owns the job."""
        async with self._writing:
            now = self.clock()
            until = now + self.job.lease
            held = await self.store.heartbeat(self.job.id, self.token, until, now)
        if held:
            self.until = until
            if self.on_extended is not None:
                await self.on_extended(until, now)
        else:
            self.lost.set()
            self.on_lost()
        return held

    # -- the outcome's write -------------------------------------------------------------

    async def write(self, what: str, call: Callable[[], Awaitable[bool]]) -> Written:
        """Send ``call`` (the same each time) until the store answers or the lease ends."""
        give_up = time.monotonic() + max(0.0, self.until - self.clock())
        if self.deadline is not None:
            give_up = min(give_up, self.deadline)
        failures = 0
        while True:
            try:
                async with self._writing:
                    accepted = await call()
            except Exception as error:
                failures += 1
                left = min(give_up - time.monotonic(), self.until - self.clock())
                if self.lost.is_set():
                    return Written.LOST
                if left <= 0:
                    self._give_up(what, error)
                    return Written.UNRECORDED
                await self._pause(what, error, min(WRITE_RETRY.delay(failures), left))
                if self.lost.is_set():
                    return Written.LOST
                continue
            return Written.WRITTEN if accepted else Written.REFUSED

    async def _pause(self, what: str, error: Exception, delay: float) -> None:
        """Wait before the next try; a refused heartbeat ends the wait at once."""
        self.log(
            logging.WARNING,
            Event.RUN_FAILED,
            f"Recording the {what} of job {self.job.name!r} ({self.job.id}) failed: "
            f"{describe_error(error)}; trying again in {delay:.2f}s",
            error=describe_error(error),
        )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.lost.wait(), delay)

    def _give_up(self, what: str, error: Exception) -> None:
        job = self.job
        past_deadline = self.deadline is not None and time.monotonic() >= self.deadline
        within = "before the invocation deadline" if past_deadline else "within its lease"
        self.log(
            logging.ERROR,
            Event.RUN_FAILED,
            f"Could not record the {what} of job {job.name!r} ({job.id}) {within}: "
            f"{describe_error(error)}; {after_lease(job)}",
            error=describe_error(error),
        )


def after_lease(job: Job) -> str:
    """What becomes of a claimed job whose outcome was not recorded (spec: "Fencing")."""
    if job.attempts >= job.max_attempts:
        return (
            f"this was its final attempt ({job.attempts} of {job.max_attempts}): "
            "the next claim after its lease dead-letters it"
        )
    return (
        f"the next claim after its lease runs it again "
        f"(this was attempt {job.attempts} of {job.max_attempts})"
    )


async def cancelled(store: JobStore, job_id: str, now: float) -> bool:
    """Whether a job whose lease was refused was cancelled (rather than claimed again).

    A read that fails says no: the lease's loss is then reported as it would have been.
    """
    try:
        record = await store.get(job_id, now)
    except Exception:
        return False
    return record is not None and record.status is JobStatus.CANCELLED
