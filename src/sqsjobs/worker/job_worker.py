"""JobWorker: claims jobs from its queues and runs them, up to ``concurrency`` at a time.

The claim loop never holds more jobs than it has free slots. With several queues it
first sweeps them in list order without waiting, so a runnable job in an earlier queue
is claimed before any in a later one; when that finds nothing it long-polls every queue
at once and releases (without spending an attempt) whatever arrives beyond its free
slots. A store error while claiming is logged and retried with backoff; it never ends
the worker. ``stop(grace)`` lets running jobs finish for ``grace`` seconds, then
interrupts them and releases them, so a deploy never burns an attempt; meanwhile it
waits for the long polls it cut short, whose messages go back to the queue at once
(``drain``), so the next worker meets no hidden job. With
``tenant_concurrency`` a claimed job whose tenant already has that many runs here is
deferred rather than run (``tenant_cap``). While it runs it keeps a presence record of
itself in the store (``presence``), which ``stop`` ends: ``sqsjobs workers`` lists it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import signal
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..core.backoff import Backoff
from ..core.errors import JobConfigError, describe_error
from ..core.lifecycle import after_lease
from ..core.models import Job
from ..core.store import watch_claims
from ..core.validation import POSITIVE, integer, seconds
from ..cron.schedule import Cron
from ..handlers.registry import Handler, JobRegistry
from ..observe.log import Event, default_logger, log_event
from ..observe.metrics import Metrics, MetricsMode, RegisteredNames
from ..observe.outputs import metrics_for
from ..producer.queue import JobQueue
from .crons import run_cron, worker_crons
from .drain import drain
from .permits import slot_store
from .presence import Presence
from .run import Hook, Hooks, JobRun, RunSettings
from .served_queues import served_queues
from .signals import on_stop_signals
from .tenant_cap import TenantCap

LONG_POLL = 20.0  # seconds a claim may wait for work; stores cap it at what they support
CLAIM_RETRY = Backoff(base=0.5, max=30.0)
MAX_CONCURRENCY = 1000
WARN_CONCURRENCY = 32  # above this, a worker's load on downstream systems deserves a look


@dataclass(frozen=True)
class WorkerState:
    running: bool
    in_flight: int
    worker_id: str


class JobWorker:
    """Runs jobs from ``queue``'s store with the allowlisted ``handlers``."""

    def __init__(
        self,
        queue: JobQueue,
        handlers: JobRegistry | Mapping[str, Handler],
        *,
        queues: Sequence[str] | None = None,
        concurrency: int = 1,
        tenant_concurrency: int | None = None,
        poll_interval: float = 0.2,
        worker_id: str | None = None,
        on_complete: Hook | None = None,
        on_fail: Hook | None = None,
        on_dead: Hook | None = None,
        cron: Sequence[Cron] = (),
        logger: logging.Logger | None = None,
        clock: Callable[[], float] | None = None,
        metrics: MetricsMode | Metrics = "off",
    ) -> None:
        registry = JobRegistry.from_handlers(handlers)
        if any(spec.limits for spec in map(registry.get, registry) if spec is not None):
            slot_store(queue.store)  # limited handlers need the store's slots: refused now
        self._concurrency = integer(
            concurrency, "concurrency", minimum=1, maximum=MAX_CONCURRENCY, code=None
        )
        self._poll_interval = seconds(poll_interval, "poll_interval", POSITIVE, code=None)
        self._tenants = TenantCap(
            None
            if tenant_concurrency is None
            else integer(tenant_concurrency, "tenant_concurrency", minimum=1, code=None)
        )
        self._queue = queue
        self._queues = served_queues(queue.store, queue.default_queue, registry, queues)
        self._cron = worker_crons(registry, cron)
        self._clock = clock or queue.clock
        self._logger = default_logger(logger)
        self.worker_id = worker_id or f"worker-{uuid.uuid4().hex[:12]}"
        self.metrics = metrics_for(metrics)  # "off" by default: the application chooses
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._settings = RunSettings(
            store=queue.store,
            registry=registry,
            backoff=queue.backoff,
            payload_max_bytes=queue.payload_max_bytes,
            clock=self._clock,
            logger=self._logger,
            worker_id=self.worker_id,
            hooks=Hooks(on_complete, on_fail, on_dead),
            executor=self._thread_pool(),
            metrics=RegisteredNames(self.metrics, registry),  # unknown job names as one value
        )
        self._runs: dict[asyncio.Task[None], JobRun] = {}
        self._busy = 0
        self._slot_freed = asyncio.Event()
        self._started = self._stopping = False
        self._tasks: list[asyncio.Task[None]] = []
        self._polls: dict[str, asyncio.Future[int]] = {}
        self._stopped = asyncio.Event()
        self._presence = Presence(self._settings, self._queues, self._concurrency)
        if self._concurrency > WARN_CONCURRENCY:
            log_event(
                self._logger,
                logging.WARNING,
                Event.HIGH_CONCURRENCY,
                f"Worker concurrency {self._concurrency} is unusually high; bound it to what "
                "downstream systems can take",
                worker_id=self.worker_id,
            )

    def _thread_pool(self) -> concurrent.futures.ThreadPoolExecutor:
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=self._concurrency, thread_name_prefix="sqsjobs-handler"
        )
        return self._executor

    @property
    def queue(self) -> JobQueue:
        """The producer this worker claims through (its store, clock and backoff)."""
        return self._queue

    @property
    def state(self) -> WorkerState:
        return WorkerState(
            running=self._started and not self._stopping,
            in_flight=self._busy,
            worker_id=self.worker_id,
        )

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Serve in the background on the running event loop until ``stop()``."""
        if self._stopping:
            raise JobConfigError(
                "invalid_option", "This worker was stopped; create a new JobWorker to start again"
            )
        if self._started:
            raise JobConfigError("invalid_option", "This worker is already started")
        loop = asyncio.get_running_loop()
        self._started = True
        watch_claims(self._queue.store, self.worker_id, self.metrics.refused)
        self._tasks.append(loop.create_task(self._serve(), name=f"{self.worker_id}-claims"))
        presence = self._presence.keep(lambda: self._busy)  # ``sqsjobs workers`` shows it
        self._tasks.append(loop.create_task(presence, name=f"{self.worker_id}-presence"))
        for cron in self._cron:
            ticks = run_cron(cron, self._queue, self._clock, self._log)
            self._tasks.append(loop.create_task(ticks, name=f"cron-{cron.name}"))
        log_event(
            self._logger,
            logging.INFO,
            Event.WORKER_STARTED,
            f"Worker {self.worker_id} started on {', '.join(self._queues)} "
            f"with concurrency {self._concurrency} (sqsjobs {__version__})",
            worker_id=self.worker_id,
            queues=list(self._queues),
            concurrency=self._concurrency,
            sqsjobs_version=__version__,  # which release runs, during a rolling upgrade
        )

    async def stop(self, grace: float = 5.0) -> None:
        """Claim nothing more, let running jobs finish for ``grace`` seconds, release the rest;
        return once the long polls it cut short have ended (``drain``)."""
        grace = seconds(grace, "grace", code=None)
        if self._stopping:
            await self._stopped.wait()
            return
        self._stopping = True
        self._slot_freed.set()
        background: list[asyncio.Future[Any]] = [*self._tasks, *self._polls.values()]
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        self._polls.clear()
        if self._started or self._runs:
            await drain(self._runs, grace, self._queue.store, self._clock, self._log)
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        watch_claims(self._queue.store, self.worker_id, None)
        await self._presence.end()
        if self._started:
            log_event(
                self._logger,
                logging.INFO,
                Event.WORKER_STOPPED,
                f"Worker {self.worker_id} stopped",
                worker_id=self.worker_id,
            )
        self._stopped.set()

    async def run(self, *, grace: float = 5.0) -> None:
        """Start, then serve until ``stop()`` or SIGTERM/SIGINT, which drain with ``grace``."""
        loop = asyncio.get_running_loop()
        stopping: list[asyncio.Task[None]] = []

        def on_signal(signum: signal.Signals) -> None:
            self._log(
                logging.INFO,
                Event.SIGNAL,
                f"Received {signum.name}: "
                + ("already draining" if stopping else f"claiming no more jobs (grace {grace:g}s)"),
                signal=signum.name,
            )
            if not stopping:
                stopping.append(loop.create_task(self.stop(grace)))

        try:
            # The handlers go on before start() logs "started": a platform (or a test) that
            # waits for that line and then sends SIGTERM always gets a drain, never a kill.
            with on_stop_signals(loop, on_signal):
                self.start()
                await self._stopped.wait()
        finally:
            await asyncio.gather(*stopping)

    async def __aenter__(self) -> JobWorker:
        self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- claiming ------------------------------------------------------------------------

    async def run_once(self) -> bool:
        """Claim one job (queues in order, no waiting) and run it to the end."""
        for queue in self._queues:
            jobs = await self._queue.store.claim(queue, self.worker_id, self._clock(), limit=1)
            if jobs:
                await self._start(jobs[0])
                return True
        return False

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

    # -- running -------------------------------------------------------------------------

    def _start(self, job: Job) -> asyncio.Task[None]:
        held_back = self._tenants.admit(job)  # over its tenant's cap: the run defers it
        run = JobRun(job, self._settings, held_back=held_back)
        self._busy += 1
        self._presence.claimed(job.queue, self._clock())
        self._log(
            logging.INFO if held_back is None else logging.DEBUG,
            Event.CLAIM,
            f"Claimed job {job.name!r} ({job.id}), attempt {job.attempts} of {job.max_attempts}",
            job,
        )
        task = asyncio.ensure_future(self._execute(run))
        self._runs[task] = run
        task.add_done_callback(self._runs.pop)
        return task

    async def _execute(self, run: JobRun) -> None:
        loop = asyncio.get_running_loop()
        try:
            await run.execute()
        except Exception as error:  # not the handler's nor the store's: those have outcomes
            self._log(
                logging.ERROR,
                Event.RUN_FAILED,
                f"Running job {run.job.id} raised outside its handler: {describe_error(error)}; "
                f"unless its outcome was recorded, {after_lease(run.job)}",
                run.job,
                error=describe_error(error),
            )
        finally:
            if run.held_back is None:
                self._tenants.leave(run.job)
            if run.thread is not None and not run.thread.done():
                # A sync handler's thread keeps its slot until it returns.
                run.thread.add_done_callback(lambda _: loop.call_soon_threadsafe(self._free_slot))
            else:
                self._free_slot()

    def _free_slot(self) -> None:
        self._busy -= 1
        self._slot_freed.set()

    def _log(
        self, level: int, event: Event, message: str, job: Job | None = None, **extra: Any
    ) -> None:
        log_event(self._logger, level, event, message, job, worker_id=self.worker_id, **extra)
