"""A run's hold on its claimed job: heartbeats, and the outcome's write under the lease.

Recording the outcome (complete, fail or release) is one store write. When the store
call raises (AWS still throttling after the client's own retries, a network failure),
giving up would leave the job to the next claim although its handler ran: it would run
twice, or be dead-lettered after a success on its final attempt. A bound in time, such
as the lease the write began in, only moves that failure: once it passes, the lease
lapses and the next claim has the job. So the same write is tried again, with capped
backoff, for as long as it takes, while the heartbeats go on every lease/3 (the
record's ``lease_until`` and the message's visibility), so no other claim can take the
job meanwhile. What ends the tries is the store's answer, or whoever runs the job:

    write accepted ─────────────────────────────────────► WRITTEN
    write refused (another claim's token) ──────────────► REFUSED, or CANCELLED
      the record still ours and not this write's ───────► tried again, as an error
    a heartbeat refused meanwhile: one more try, and
      the record shows this write (its response lost) ──► WRITTEN
      it still runs under our token (lapsed, untaken) ──► the tries go on, unheld
      else ─────────────────────────────────────────────► LOST, or CANCELLED
    the worker stops and its grace is over: one release ► RELEASED; or, that failing
                                                          too, UNRECORDED: heartbeats end
                                                          and the lease runs out
    the invocation's deadline (Lambda): one release ────► RELEASED, or UNRECORDED as above
    refused as invalid for ``PERMANENT_PATIENCE`` leases ► UNRECORDED, heartbeats end

A heartbeat refused while the record read after it allows one (still running under the
run's token, the lease not over) is the store erring, not the lease lost: it is logged and
the next beat tries again, the handler going on.

Every way out that records nothing is logged with what becomes of the job. The
worker's slot stays taken meanwhile: the job is not done. A write refused as invalid
(``refused_for_good``: too large, malformed) held that way would keep its slot until a
stop, whose release would run it again uncounted; so it is let go, by time, not by a
count. Any other refusal is tried like throttling: an expired token or an access denied
is what a credential rollover looks like for seconds, and giving up on it would turn a
success into a failure (on the final attempt, a dead job).

Repeating the write is safe: each try is the same call (its ``now`` fixed), fenced on the
lease token. A try whose response was lost may have taken effect, and the next is then
refused by the record it left: the SQS store knows its own write (``flows.settle``);
any store's record showing the write's status at its ``now`` is that write's.

A heartbeat waits for a write's try in flight, one interval at most: so neither's change
to the message overtakes the other's, and a try botocore keeps retrying cannot lapse the lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ..core.backoff import Backoff
from ..core.errors import describe_error, refused_for_good
from ..core.lifecycle import after_lease, holds_lease, may_heartbeat
from ..core.models import Job
from ..core.store import JobStore
from ..core.times import epoch, utc
from ..observe.log import Event
from .progress import Progress
from .writes import RefusedWhileHeld, Write, Written, judged, shows

WRITE_RETRY = Backoff(base=0.5, max=4.0)  # between tries of a store write that raised
LOGGED_FIRST, LOGGED_EVERY = 3, 10  # failures logged one by one, then every 10th
STOP_PATIENCE = 5.0  # seconds a stopping worker gives the release of a pending write
PERMANENT_PATIENCE = 3  # leases a write the store refuses as invalid is tried for
Log = Callable[..., None]  # (level, event, message, **extra), the run's log
StoreCall = Callable[[], Awaitable[bool]]


class _Stopped(Exception):
    """The worker stopped, its grace over, while a write that gives way to it was pending."""


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
        self.error: str | None = None  # why the outcome's last try failed, if it did
        self._stopping = asyncio.Event()  # the worker stopped and its grace is over
        self._writing = asyncio.Lock()  # a heartbeat waits for a write's try in flight
        self._beating: asyncio.Future[None] | None = None
        self.progress = Progress(store)  # what ``ctx.progress`` reported, until written

    def written_by(
        self, write: Callable[..., Awaitable[bool]], *args: Any, **keywords: Any
    ) -> StoreCall:
        """An outcome's store write (``write(job_id, token, *args)``), the same call at every
        try, carrying the progress no heartbeat has carried yet."""
        riding, _ = self.progress.riding()
        return functools.partial(write, self.job.id, self.token, *args, **keywords, **riding)

    # -- heartbeats ----------------------------------------------------------------------

    def hold(self) -> None:
        """Heartbeat every lease/3 from now until ``let_go`` or a refusal."""
        self._beating = asyncio.ensure_future(self._keep())

    def let_go(self) -> None:
        """Stop heartbeating; a heartbeat in flight is cancelled where it waits."""
        if self._beating is not None:
            self._beating.cancel()

    async def _let_go_now(self) -> None:
        """Stop heartbeating, and wait until no heartbeat is in flight."""
        self.let_go()
        if self._beating is not None:
            await asyncio.gather(self._beating, return_exceptions=True)

    def stop(self) -> None:
        """The worker is stopping and its grace is over: a pending outcome gives way to a
        release (``Write.instead``)."""
        self._stopping.set()

    async def _keep(self) -> None:
        interval = self.job.lease / 3
        while True:
            await asyncio.sleep(interval)
            try:
                if not await self.beat(patience=interval):
                    return
            except Exception as error:  # a failing store call: the next beat may still succeed
                self.log(
                    logging.WARNING,
                    Event.HEARTBEAT_FAILED,
                    f"Heartbeat for job {self.job.id} failed: {describe_error(error)}",
                    error=describe_error(error),
                )

    async def beat(self, patience: float | None = None) -> bool:
        """Extend the lease now; False (and ``on_lost``) once the store refuses it.

        ``patience``: how long to wait for a write's try in flight before going ahead.
        """
        async with self._turn(patience):
            now = self.clock()
            until = now + self.job.lease
            riding, mark = self.progress.riding()
            held = await self.store.heartbeat(self.job.id, self.token, until, now, **riding)
        if held:
            self.progress.carried(mark)
            self.until = until
            if self.on_extended is not None:
                await self.on_extended(until, now)
        elif self._may_beat(await self._read(), now):  # no condition failed: the store erred
            raise RefusedWhileHeld()
        else:
            self.lost.set()
            self.on_lost()
        return held

    def _may_beat(self, record: Job | None, now: float) -> bool:
        """Whether ``record`` allows a heartbeat at ``now``, as the store's condition reads it."""
        if record is None:
            return False
        until = None if record.lease_until is None else epoch(record.lease_until)
        return may_heartbeat(record.status, record.lease_token, until, self.token, now)

    @contextlib.asynccontextmanager
    async def _turn(self, patience: float | None) -> AsyncIterator[None]:
        """The write lock, or, after ``patience`` seconds without it, no lock."""
        try:
            taken: bool = await asyncio.wait_for(self._writing.acquire(), patience)
        except TimeoutError:
            taken = False
        try:
            yield
        finally:
            if taken:
                self._writing.release()

    # -- the outcome's write -------------------------------------------------------------

    async def write(self, write: Write) -> Written:
        """Send ``write`` until the store answers or the run must end (module docs); the
        heartbeats end with it, before any hook runs."""
        try:
            return await self._write(write)
        finally:
            self.let_go()

    async def _write(self, write: Write) -> Written:
        failures = 0
        refused_since: float | None = None  # on ``clock``: the first of the refusals in a row
        while True:
            try:
                if await self._try(write, race=failures > 0):
                    return Written.WRITTEN
                return judged(await self._refusal(write), write, Written.REFUSED)
            except _Stopped:
                return await self._give_way(write)
            except Exception as error:
                failures += 1
                self.error = describe_error(error)
                refused_since = self._refused_since(error, refused_since)
                if refused_since is not None:
                    waited = self.clock() - refused_since
                    if waited >= PERMANENT_PATIENCE * self.job.lease:
                        await self._let_go_now()
                        when = f"after {failures} tries in {waited:.0f}s"
                        then = "; the store refuses it as invalid, so heartbeats stopped: "
                        return self._unrecorded(write, when, then)
                ended = await self._after_failure(write, failures)
                if ended is not None:
                    return ended

    def _refused_since(self, error: Exception, since: float | None) -> float | None:
        """When the refusals as invalid in a row began, ``error`` one more; None if not."""
        if not (refused_for_good(error) or isinstance(error, RefusedWhileHeld)):
            return None
        return self.clock() if since is None else since

    async def _refusal(self, write: Write) -> Job | None:
        """The record after ``write`` was refused. Still this run's and not the write's, it
        contradicts the refusal (no condition failed): the store erred, and the write is
        tried again like after an error, let go by time like an invalid one."""
        record = await self._read()
        if record is not None and not shows(record, write) and self._holds(record):
            raise RefusedWhileHeld()
        return record

    async def owner(self) -> Written:
        """After a heartbeat was refused with no write pending: CANCELLED or LOST."""
        return judged(await self._read(), None, Written.LOST)

    async def _try(self, write: Write, *, race: bool) -> bool:
        """One try; with ``race``, a stop abandons it (``_Stopped``) if it gives way to one.

        The first try does not race: a stop comes only after a grace, and the hot path
        of every job should not pay for watching it.
        """
        async with self._turn(None):
            if not race or write.instead is None:
                return await write.call()
            if self._stopping.is_set():
                raise _Stopped
            return await _unless(self._stopping, write.call)

    async def _after_failure(self, write: Write, failures: int) -> Written | None:
        """Wait before the next try; None to make it, else how the write ended."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            if write.instead is not None:  # released, run again: never dead for a late write
                return await self._give_way(write, "before the invocation deadline")
            return self._unrecorded(write, "before the invocation deadline", "; ")
        delay = 0.0 if self.lost.is_set() else WRITE_RETRY.delay(failures)
        if self.deadline is not None:
            delay = min(delay, self.deadline - time.monotonic())
        self._warn(write, failures, delay)
        await self._pause(write, delay)
        if self.lost.is_set():
            return await self._confirm(write)
        if write.instead is not None and self._stopping.is_set():
            return await self._give_way(write)
        return None

    async def _pause(self, write: Write, delay: float) -> None:
        """Wait ``delay`` seconds; a refused heartbeat, or a stop the write gives way to,
        ends the wait at once."""
        events = [self.lost] if write.instead is None else [self.lost, self._stopping]
        waits = [asyncio.ensure_future(event.wait()) for event in events]
        try:
            await asyncio.wait(waits, timeout=max(0.0, delay), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    async def _confirm(self, write: Write) -> Written | None:
        """A heartbeat was refused while ``write`` was pending: perhaps by the record an
        earlier try of it left (its response lost). Try once more, and read the record if
        that is refused or fails; None when the job still runs under our token (its lease
        lapsed, no claim took it yet): the tries go on, since the write may still land."""
        try:
            if await self._try(write, race=True):
                return Written.WRITTEN
            failed = False
        except _Stopped:
            return await self._give_way(write)
        except Exception as error:
            self.error, failed = describe_error(error), True
        record = await self._read()
        if failed and record is not None and self._holds(record) and not shows(record, write):
            self.lost.clear()
            return None
        return judged(record, write, Written.LOST)

    async def _give_way(self, write: Write, when: str = "before the worker stopped") -> Written:
        """The stop's grace (or the invocation) ended with ``write`` unrecorded: one try of
        its release (the job queued again, the attempt not counted), then what follows."""
        assert write.instead is not None, "only a write with a release gives way to a stop"
        release = write.instead()
        failed: str | None = None
        record: Job | None = None
        try:
            async with asyncio.timeout(STOP_PATIENCE):
                try:
                    if await release.call():
                        return Written.RELEASED
                except Exception as error:
                    failed = describe_error(error)
                record = await self._read()
        except TimeoutError:
            failed = failed or f"no answer within {STOP_PATIENCE:g}s"
        if shows(record, release):
            return Written.RELEASED
        if failed is None or (record is not None and not self._holds(record)):
            return judged(record, write, Written.LOST)
        await self._let_go_now()  # so the lease logged below is the last one
        until = utc(self.until).isoformat(timespec="milliseconds")
        then = f"; releasing it failed too ({failed}); heartbeats stopped, its lease runs out at "
        return self._unrecorded(write, when, f"{then}{until}: ")

    # -- helpers -------------------------------------------------------------------------

    def _holds(self, record: Job) -> bool:
        return holds_lease(record.status, record.lease_token, self.token)

    async def _read(self) -> Job | None:
        """The job's record now; None when the store cannot say (or has none)."""
        try:
            return await self.store.get(self.job.id, self.clock())
        except Exception:
            return None

    def _warn(self, write: Write, failures: int, delay: float) -> None:
        """A failed try, logged for the first few and then every tenth: a store failing
        for minutes must not flood the log."""
        if failures > LOGGED_FIRST and failures % LOGGED_EVERY:
            return
        tries = "1 try" if failures == 1 else f"{failures} tries"
        quieter = f"; from now on every {LOGGED_EVERY}th failure is logged"
        self.log(
            logging.WARNING,
            Event.RUN_FAILED,
            f"Recording the {write.what} of job {self.job.name!r} ({self.job.id}) failed "
            f"({tries} so far): {self.error}; trying again in {max(0.0, delay):.2f}s"
            + (quieter if failures == LOGGED_FIRST else ""),
            error=self.error,
            failures=failures,
        )

    def _unrecorded(self, write: Write, when: str, then: str) -> Written:
        """Log that ``write`` ends unrecorded ``when``, ``then`` what follows; the next
        claim after the lease has the job."""
        job, why = self.job, self.error or "the store had not answered"
        self.log(
            logging.ERROR,
            Event.RUN_FAILED,
            f"Could not record the {write.what} of job {job.name!r} ({job.id}) {when}: "
            f"{why}{then}{after_lease(job)}",
            error=why,
        )
        return Written.UNRECORDED


async def _unless(stop: asyncio.Event, call: Callable[[], Awaitable[bool]]) -> bool:
    """``call()``, abandoned (``_Stopped``) if ``stop`` is set first."""
    attempt = asyncio.ensure_future(call())
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([attempt, stopped], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
        if not attempt.done():
            attempt.cancel()
            await asyncio.gather(attempt, return_exceptions=True)
    if attempt.cancelled():
        raise _Stopped
    return attempt.result()
