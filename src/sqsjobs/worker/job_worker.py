"""JobWorker: claims jobs from its queues and runs them, up to ``concurrency`` at a time.

The claim loop (``claim_loop``) never holds more jobs than it has free slots. With
several queues it first sweeps them in list order without waiting, so a runnable job in
an earlier queue is claimed before any in a later one; when that finds nothing it
long-polls every queue at once and releases (without spending an attempt) whatever
arrives beyond its free slots. A store error while claiming is logged and retried with
backoff; it never ends the worker. ``stop(grace)`` lets running jobs finish for
``grace`` seconds, then interrupts them and releases them, so a deploy never burns an
attempt; meanwhile it waits for the long polls it cut short, whose messages go back to
the queue at once (``drain``), so the next worker meets no hidden job. With
``tenant_concurrency`` a claimed job whose tenant already has that many runs here is
deferred rather than run (``tenant_cap``). While it runs it keeps a presence record of
itself in the store (``presence``), which ``stop`` ends: ``sqsjobs workers`` lists it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import signal
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import __version__
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
from .claim_loop import ClaimLoop
from .crons import run_cron, worker_crons
from .drain import drain
from .permits import slot_store
from .presence import Presence
from .run import Hook, Hooks, JobRun, RunSettings
from .served_queues import served_queues
from .signals import on_stop_signals
from .tenant_cap import TenantCap

MAX_CONCURRENCY = 1000
WARN_CONCURRENCY = 32  # above this, a worker's load on downstream systems deserves a look


@dataclass(frozen=True)
class WorkerState:
    """A worker at one moment: serving (started, not stopping), how many jobs it runs,
    and its id."""

    running: bool
    in_flight: int
    worker_id: str


class JobWorker(ClaimLoop):
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
        """A worker over ``queue``'s store; every argument is checked here, before it runs.

        Args:
            queue: The producer whose store it claims from; its clock and backoff (retry
                delays) are the worker's too.
            handlers: The allowlist: a ``JobRegistry`` (its crons run too), or a mapping
                of job name to handler. A job of any other name is dead-lettered.
            queues: The queues to claim from, earlier ones first; left out, the store's
                configured queues, else the producer's default queue and those the
                handlers declare.
            concurrency: The most jobs run at once (1 to 1000); a blocking handler runs
                in a thread of the worker's pool of that size.
            tenant_concurrency: The most jobs of one tenant run at once here; one over it
                is deferred (back in its queue shortly, the attempt not counted).
            poll_interval: Seconds between claims on a store that cannot wait for work,
                and the least pause after a failed claim.
            worker_id: Its name in logs, on claimed jobs and in its presence record;
                left out, ``worker-`` and a random suffix.
            on_complete: Called with the job once its completion is recorded.
            on_fail: Called with the job, the error, whether it will retry and the delay
                before it, once a failed attempt is recorded.
            on_dead: Called with the job and the error once it is recorded dead. Hooks
                may be coroutine functions; one that raises is logged, never retried.
            cron: ``Cron`` schedules to enqueue as well as the registry's; each tick is
                enqueued once, however many workers carry it.
            logger: Where its log lines go; left out, the ``sqsjobs`` logger.
            clock: Epoch seconds; left out, the producer's.
            metrics: ``"emf"``, ``"prometheus"`` or a ``Metrics``; ``"off"`` by default.

        Raises:
            JobConfigError: An empty registry, limited handlers on a store without
                limit slots (``LimitStore``), or an invalid queue or cron.
            ValueError: An invalid number (``concurrency``, ``poll_interval``, ...).
        """
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
        """Whether it serves, and how many jobs it runs, now."""
        return WorkerState(
            running=self._started and not self._stopping,
            in_flight=self._busy,
            worker_id=self.worker_id,
        )

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Serve in the background on the running event loop until ``stop()``.

        Raises:
            JobConfigError: It was started already, or stopped (a new worker is needed).
        """
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
        return once the long polls it cut short have ended (``drain``).

        A released job is back in its queue at once, its attempt not counted, so a
        deploy costs no attempt. Calling it again waits for the first call to finish.

        Args:
            grace: Seconds running jobs have to finish before they are interrupted.

        Raises:
            ValueError: ``grace`` is not a number of seconds.
        """
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
        """Start, then serve until ``stop()`` or SIGTERM/SIGINT, which drain with ``grace``.

        The main loop of a worker process: ``asyncio.run(worker.run())``.

        Args:
            grace: Seconds running jobs have to finish once a signal stops the worker.

        Raises:
            JobConfigError: The worker was started already, or stopped.
        """
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
