"""The run algorithm for one claimed job, shared by ``JobWorker`` and the Lambda handler.

    claimed ──► unknown name / payload fails its model ──────────────► fail (dead)
       │
       ▼ handler task  + heartbeat every lease/3  + timeout timer  (+ cutoff timer)
       │
       ├─ returned, result is JSON within the size cap ──────────────► complete
       ├─ raised JobFatalError, or the result was refused (work done) ► fail (dead)
       ├─ raised anything else ──────────────────────────────────────► fail (retry or dead)
       └─ interrupted: the *reason* decides, whatever the handler did after it
            timeout ──► fail with JobTimeoutError (retryable)
            lease lost (a heartbeat was refused) ──► record nothing: the next claim owns it,
                                                      or an operator cancelled the job
            stop / cutoff ──► release: queued again at once, the attempt not counted

Before the handler starts, a job the worker holds back (its tenant's cap) or whose
handler's limits have no free slot (``permits``) is deferred: released ``delayed`` by
a short delay, the attempt not counted. Limit slots are extended with each heartbeat and
freed once the outcome is recorded, whatever it was.

The record's options apply (its timeout here, the others through the store); a record
holding the library's defaults where the handler declares others is logged (``declared_options``).

Heartbeats run from the claim until the outcome is recorded, and a store write that
raises is tried again, the heartbeats holding the lease, until the store answers
(``lease``). Only a stop whose grace is over (then the job is released instead) or the
invocation's deadline ends the tries; an outcome left unrecorded is the next claim's
after the lease, and the log says what that claim will do.

``ctx.cancelled`` is set before the handler task is cancelled, so a handler's ``except
CancelledError`` can see why. Hooks run once the store accepted the outcome; one raising is logged.

Every run is reported here, once, to ``settings.metrics`` and its trace span
(``observe.telemetry``): the worker and the Lambda handler measure nothing themselves.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import logging
import random
import time
from collections.abc import Callable
from enum import Enum
from typing import Any, Literal, NamedTuple

from ..core.backoff import Backoff
from ..core.errors import JobConfigError, JobFatalError, JobTimeoutError, describe_error
from ..core.lifecycle import COMPLETED, CUTOFF_ERROR, STOPPING_ERROR, after_failure, after_release
from ..core.models import Job
from ..core.store import JobStore, effective_delay
from ..core.tracebacks import FailureText, handler_traceback
from ..core.validation import stored_result
from ..handlers.context import JobContext, context_logger
from ..handlers.limits import HandlerLimits
from ..handlers.registry import HandlerSpec, JobRegistry
from ..observe.log import Event, log_event
from ..observe.metrics import OFF, Metrics
from ..observe.telemetry import Observed
from . import declared_options
from .lease import Lease
from .parents import handed
from .permits import Deferral, Permits, defer_delay
from .writes import Write, Written

Reason = Literal["timeout", "lease_lost", "stop", "cutoff"]
ENDS = {False: ("the stop's grace", STOPPING_ERROR), True: ("the invocation", CUTOFF_ERROR)}
Hook = Callable[..., Any]
_RANDOM = random.Random()  # slot order and deferral jitter


class Outcome(Enum):
    """How a run ended; the values are the ``outcome`` names metrics and spans carry."""

    COMPLETED = "completed"
    RETRY = "retried"
    DEAD = "dead"
    RELEASED = "released"
    DEFERRED = "deferred"  # a limit or a tenant's cap held its start back: delayed, not counted
    LOST = "lease_lost"  # the store refused the write: another claim owns the job now
    CANCELLED = "cancelled"  # refused too, because an operator cancelled the job as it ran
    UNRECORDED = "unrecorded"  # the write kept failing: the next claim after the lease has it


class Hooks(NamedTuple):
    on_complete: Hook | None = None
    on_fail: Hook | None = None
    on_dead: Hook | None = None


class RunSettings(NamedTuple):
    """What a run needs from whoever claimed the job."""

    store: JobStore
    registry: JobRegistry
    backoff: Backoff
    payload_max_bytes: int
    clock: Callable[[], float]
    logger: logging.Logger
    worker_id: str
    hooks: Hooks = Hooks()
    executor: concurrent.futures.Executor | None = None
    metrics: Metrics = OFF


class JobRun:
    """One claimed job, run to an outcome the store accepted (or refused)."""

    def __init__(
        self,
        job: Job,
        settings: RunSettings,
        *,
        cutoff: float | None = None,
        held_back: str | None = None,
    ) -> None:
        assert job.lease_token is not None, "a claimed job carries its lease token"
        self.job, self.token, self.settings, self.cutoff = job, job.lease_token, settings, cutoff
        self.cancelled = asyncio.Event()
        self.timeout = job.timeout  # the record's, as every option (``declared_options``)
        self.reason: Reason | None = None
        self.thread: concurrent.futures.Future[Any] | None = None
        self.outcome: Outcome | None = None  # once ``execute`` returned
        self.error: BaseException | None = None  # the failure recorded, if any
        self.observed = Observed(job, settings.metrics, settings.worker_id)
        self._handler_task: asyncio.Future[Any] | None = None
        self.held_back = held_back  # the worker's reason this job may not start (a cap)
        self.permits = Permits(settings.store, self.token, self._log, _RANDOM)
        self.lease = Lease(
            job,
            settings.store,
            settings.clock,
            self._log,
            deadline=None if cutoff is None else time.monotonic() + cutoff,
            on_lost=lambda: self.interrupt("lease_lost"),
            on_extended=self.permits.extend,
        )

    def interrupt(self, reason: Reason) -> None:
        """Cancel the handler for ``reason``; the first reason given is the one that counts.

        A stop also reaches an outcome whose write is still being retried: the stop's
        grace is over, so the job is released instead (``lease``).
        """
        if self.reason is None:
            self.reason = reason
        if reason == "stop":
            self.lease.stop()
        self.cancelled.set()
        if self._handler_task is not None:
            self._handler_task.cancel()

    async def execute(self) -> Outcome:
        """Run the job and record its outcome, heartbeating until the store has it."""
        self.lease.hold()
        try:
            self.outcome = await self._outcome()
        finally:
            self.lease.let_go()
            await self.permits.free(self.settings.clock())
            self.observed.end(None if self.outcome is None else self.outcome.value, self.error)
        return self.outcome

    async def _outcome(self) -> Outcome:
        if self.held_back is not None:
            delay = defer_delay(None, None, self.settings.clock(), _RANDOM.random())
            return await self._defer(Deferral(self.held_back, delay), logging.DEBUG)
        spec = self.settings.registry.get(self.job.name)
        if spec is None:
            return await self._fail(JobFatalError(f"Unknown job handler: {self.job.name!r}"))
        try:
            payload = spec.parse(self.job.payload)
        except JobFatalError as invalid:
            return await self._fail(invalid)
        if spec.limits is not None:
            deferral = await self._admit(spec.limits)
            if deferral is not None:
                return await self._defer(deferral, logging.INFO)
        return await self._supervise(spec, payload)

    async def _admit(self, limits: HandlerLimits) -> Deferral | None:
        """Take the handler's limit slots; a store that fails to answer defers the start too."""
        now = self.settings.clock()
        try:
            return await self.permits.take(limits.for_job(self.job), self.lease.until, now)
        except Exception as error:
            await self.permits.free(now)
            why = f"limit slots unavailable ({describe_error(error)})"
            self._log(logging.WARNING, Event.LIMIT_SLOT, f"Job {self.job.id}: {why}", error=why)
            return Deferral(why, defer_delay(None, None, now, _RANDOM.random()))

    async def _supervise(self, spec: HandlerSpec, payload: Any) -> Outcome:
        loop = asyncio.get_running_loop()
        ctx = JobContext(
            job=self.job,
            payload=payload,
            attempt=self.job.attempts,
            cancelled=self.cancelled,
            log=context_logger(self.settings.logger, self.job),
            beat=self.lease.beat,
            report=self.lease.progress.report,
            **await handed(self.settings.store, self.job, self.lease.clock()),
        )
        declared_options.check(self.job, spec.defaults, self._log)
        self.observed.begin(self.settings.clock())
        with self.observed.current():  # the task copies the context: the handler's spans nest
            self._handler_task = asyncio.ensure_future(self._call(spec, ctx))
        timers = (
            [loop.call_later(self.timeout, self.interrupt, "timeout")] if self.timeout > 0 else []
        )
        if self.cutoff is not None:
            timers.append(loop.call_later(self.cutoff, self.interrupt, "cutoff"))
        try:
            await asyncio.wait([self._handler_task])
        finally:
            for timer in timers:
                timer.cancel()
            self._handler_task.cancel()
        return await self._conclude(self._handler_task)

    async def _call(self, spec: HandlerSpec, ctx: JobContext) -> Any:
        arguments = spec.arguments(ctx)
        if spec.is_async:
            return await spec.function(*arguments)
        executor = self.settings.executor
        if executor is None:
            raise RuntimeError("a sync handler needs an executor to run in")
        call = functools.partial(spec.function, *arguments)
        self.thread = executor.submit(contextvars.copy_context().run, call)  # span, contextvars
        return await asyncio.wrap_future(self.thread)

    async def _conclude(self, task: asyncio.Future[Any]) -> Outcome:
        """Record what the handler's ending calls for; an interruption's reason comes first."""
        if self.reason == "lease_lost":
            return self._lost(await self.lease.owner(), "its lease was lost")
        if self.reason in ("stop", "cutoff"):
            return await self._release(STOPPING_ERROR if self.reason == "stop" else CUTOFF_ERROR)
        if self.reason == "timeout":
            return await self._fail(JobTimeoutError(self.timeout))
        if task.cancelled():
            return await self._fail(asyncio.CancelledError("the handler was cancelled"))
        error = task.exception()
        if error is not None:
            return await self._fail(error)
        try:
            result = stored_result(task.result(), self.settings.payload_max_bytes)
        except JobConfigError as refused:  # after the handler's work: never run it again
            return await self._fail(refused, final=True)
        return await self._complete(result)

    # -- store writes --------------------------------------------------------------------

    async def _complete(self, result: Any) -> Outcome:
        job, store, now = self.job, self.settings.store, self.settings.clock()
        call = self.lease.written_by(store.complete, now, result)
        missed = await self._record(Write("completion", call, now, COMPLETED, self._stopping))
        if missed is not None:
            return missed
        self._log(logging.INFO, Event.COMPLETE, f"Completed job {job.name!r} ({job.id})")
        await self._hook(self.settings.hooks.on_complete, job)
        return Outcome.COMPLETED

    async def _fail(self, error: BaseException, *, final: bool = False) -> Outcome:
        job, settings = self.job, self.settings
        self.observed.begin(settings.clock())  # a job dead before its handler began starts here
        self.error = error
        fatal = final or isinstance(error, JobFatalError)
        will_retry = not fatal and job.attempts < job.max_attempts
        delay = settings.backoff.delay(job.attempts) if will_retry else None
        now = settings.clock()
        retry_at = None if delay is None else now + delay
        message = FailureText(describe_error(error), handler_traceback(error))
        status, _ = after_failure(job.attempts, job.max_attempts, retry_at, now)
        call = self.lease.written_by(settings.store.fail, message, retry_at, now)
        missed = await self._record(Write("failure", call, now, status, self._stopping))
        if missed is not None:
            return missed
        if delay is not None:
            shown = effective_delay(settings.store, delay)  # SQS: whole seconds
            self._log(
                logging.WARNING,
                Event.RETRY,
                f"Job {job.name!r} ({job.id}) failed; retrying in {shown:.3f}s: {message}",
                delay=shown,
                error=message,
            )
            await self._hook(settings.hooks.on_fail, job, error, True, delay)
            return Outcome.RETRY
        self._log(
            logging.ERROR,
            Event.DEAD,
            f"Job {job.name!r} ({job.id}) dead-lettered: {message}",
            error=message,
        )
        await self._hook(settings.hooks.on_fail, job, error, False, None)
        await self._hook(settings.hooks.on_dead, job, error)
        return Outcome.DEAD

    async def _release(self, why: str) -> Outcome:
        missed = await self._record(self._releasing(why))
        return self._released(why) if missed is None else missed

    def _releasing(self, why: str, delay: float | None = None) -> Write:
        """Back to the queue (at once, or ``delay`` seconds from now), the attempt not counted."""
        store, now = self.settings.store, self.settings.clock()
        if delay is None:
            call = self.lease.written_by(store.release, why, now)
            return Write("release", call, now, after_release(None, now)[0])
        run_at = now + delay
        call = self.lease.written_by(store.release, why, now, run_at=run_at)
        return Write("deferral", call, now, after_release(run_at, now)[0])

    def _stopping(self) -> Write:
        """What an outcome unrecorded when a stop's grace (or the invocation) ends gives way to."""
        return self._releasing(ENDS[self.cutoff is not None][1])

    def _released(self, why: str, detail: str = "") -> Outcome:
        job, level = self.job, logging.INFO
        message = f"Released job {job.name!r} ({job.id}) back to its queue: {why}{detail}"
        self._log(level, Event.RELEASED, message, error=why)
        return Outcome.RELEASED

    async def _defer(self, deferral: Deferral, level: int) -> Outcome:
        """Back to the queue, delayed a little, the attempt not counted: it may not start now."""
        job = self.job
        missed = await self._record(self._releasing(f"deferred: {deferral.why}", deferral.delay))
        if missed is not None:
            return missed
        message = f"Deferred job {job.name!r} ({job.id}) by {deferral.delay:.2f}s: {deferral.why}"
        self._log(level, Event.DEFERRED, message, delay=deferral.delay, limit=deferral.why)
        return Outcome.DEFERRED

    async def _record(self, write: Write) -> Outcome | None:
        """None once the store accepted ``write``; else the outcome of a write that did not."""
        written = await self.lease.write(write)
        if written is Written.WRITTEN:
            return None
        if written is Written.UNRECORDED:
            return Outcome.UNRECORDED
        if written is Written.RELEASED:
            why = self.lease.error or "the store had not answered"
            within, reason = ENDS[self.cutoff is not None]
            return self._released(
                reason,
                f"; its {write.what} was not recorded within {within} ({why}), "
                "so it runs again, this attempt not counted",
            )
        if written is Written.LOST or (written is Written.CANCELLED and self.lease.lost.is_set()):
            return self._lost(
                written, f"its lease was lost while its {write.what} was being recorded"
            )
        return self._lost(written, f"the store refused its {write.what}")

    def _lost(self, written: Written, why: str) -> Outcome:
        """Nothing recorded: an operator cancelled the job, or another claim owns it.

        The store refuses both alike; the lease read the record to tell which, only on
        this way, never on the way to an outcome the store accepted.
        """
        job = self.job
        if written is Written.CANCELLED:
            message = f"Job {job.name!r} ({job.id}) was cancelled while it ran: {why}"
            self._log(logging.INFO, Event.CANCELLED, message)
            return Outcome.CANCELLED
        message = f"Job {job.name!r} ({job.id}) belongs to another claim: {why}"
        self._log(logging.WARNING, Event.LEASE_LOST, message)
        return Outcome.LOST

    # -- observers -----------------------------------------------------------------------

    async def _hook(self, hook: Hook | None, *arguments: Any) -> None:
        if hook is None:
            return
        try:
            outcome = hook(*arguments)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception as error:
            self._log(
                logging.ERROR,
                Event.HOOK_FAILED,
                f"Hook {getattr(hook, '__name__', hook)!r} raised for job {self.job.id}: "
                f"{describe_error(error)}",
                error=describe_error(error),
            )

    def _log(self, level: int, event: Event, message: str, **extra: Any) -> None:
        log_event(
            self.settings.logger,
            level,
            event,
            message,
            self.job,
            worker_id=self.settings.worker_id,
            **extra,
        )
