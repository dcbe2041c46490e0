"""What both producer façades share: their configuration, its read-only properties, and
the log lines of their writes. No I/O: ``queue`` holds the calls, each face its own.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..core.backoff import Backoff
from ..core.batches import ON_COMPLETE, ON_SUCCESS, Batch
from ..core.defaults import DEFAULT_LEASE, DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE, DEFAULT_TIMEOUT
from ..core.models import Job
from ..core.requests import EnqueueRequest, EnqueueResult
from ..core.store import JobStore
from ..observe.log import Event, default_logger, log_event
from .batching import BatchParts, prepare_batch
from .enqueue import QueueConfig
from .waiting import REAL_PACING, Pacing

if TYPE_CHECKING:
    from ..handlers.registry import JobRegistry

DEFAULT_BACKOFF = Backoff()


class BaseQueue:
    """Configuration and logging shared by both façades; no I/O."""

    # The clock and sleeps ``wait`` runs on (``waiting.Pacing``): real ones, which a test
    # replaces on its queue to assert the schedule of reads without sleeping.
    _pacing: Pacing = REAL_PACING

    def __init__(
        self,
        store: JobStore,
        *,
        default_queue: str = DEFAULT_QUEUE,
        payload_max_bytes: int = 65536,
        default_max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        default_timeout: float = DEFAULT_TIMEOUT,
        default_lease: float = DEFAULT_LEASE,
        backoff: Backoff = DEFAULT_BACKOFF,
        clock: Callable[[], float] = time.time,
        logger: logging.Logger | None = None,
        registry: JobRegistry | None = None,
    ) -> None:
        """A producer over ``store``; every argument is checked here, before any call.

        Args:
            store: The job store: ``MemoryJobStore`` for tests and one process,
                ``SqsJobStore`` in production, or any ``JobStore``.
            default_queue: The queue of an enqueue that names none and whose handler
                declares none.
            payload_max_bytes: The largest payload, as JSON, an enqueue accepts (at most
                what the store holds).
            default_max_attempts: ``max_attempts`` where neither enqueue nor handler sets it.
            default_timeout: ``timeout`` (seconds) likewise.
            default_lease: ``lease`` (seconds) likewise.
            backoff: The retry delays of a ``JobWorker`` built on this producer.
            clock: Epoch seconds: when jobs are created and due.
            logger: Where its log lines go; left out, the ``sqsjobs`` logger.
            registry: The handlers whose declared options fill an enqueue's gaps
                (``JobRegistry.handler``); an enqueue of a name it lacks, or of a payload
                the handler's model refuses, is then refused at once.

        Raises:
            JobConfigError: No store (``store_required``).
            ValueError: An invalid default, backoff or payload size.
        """
        self.config = QueueConfig.build(
            store,
            default_queue=default_queue,
            payload_max_bytes=payload_max_bytes,
            default_max_attempts=default_max_attempts,
            default_timeout=default_timeout,
            default_lease=default_lease,
            backoff=backoff,
            clock=clock,
            registry=registry,
        )
        self.store = store
        self.logger = default_logger(logger)

    @property
    def default_queue(self) -> str:
        """The queue of an enqueue that names none and whose handler declares none."""
        return self.config.default_queue

    @property
    def payload_max_bytes(self) -> int:
        """The largest payload, in bytes of JSON, an enqueue accepts."""
        return self.config.payload_max_bytes

    @property
    def backoff(self) -> Backoff:
        """The retry delays of a ``JobWorker`` built on this producer."""
        return self.config.backoff

    @property
    def clock(self) -> Callable[[], float]:
        """The producer's clock, in epoch seconds (a worker built on it uses it too)."""
        return self.config.clock

    @property
    def registry(self) -> JobRegistry | None:
        """The registry whose handlers' defaults fill this producer's enqueues, if any."""
        return self.config.registry

    def _logged(self, result: EnqueueResult) -> EnqueueResult:
        job = result.job
        if result.duplicate:
            log_event(
                self.logger,
                logging.INFO,
                Event.DUPLICATE,
                f"Job {job.name!r} already enqueued as {job.id} for its idempotency key",
                job,
            )
        else:
            log_event(
                self.logger,
                logging.INFO,
                Event.ENQUEUE,
                f"Enqueued job {job.name!r} ({job.id})",
                job,
                delay=max(0.0, (job.run_at - job.created_at).total_seconds()),
            )
        return result

    def _batch_parts(
        self,
        requests: Iterable[EnqueueRequest],
        on_complete: EnqueueRequest | None,
        on_success: EnqueueRequest | None,
    ) -> BatchParts:
        callbacks = ((ON_COMPLETE, on_complete), (ON_SUCCESS, on_success))
        return prepare_batch(self.config, requests, callbacks, self.clock())

    def _logged_batch(self, batch_id: str, jobs: list[Job], callbacks: list[Job]) -> Batch:
        log_event(
            self.logger,
            logging.INFO,
            Event.ENQUEUE,
            f"Enqueued batch {batch_id}: {len(jobs)} jobs, {len(callbacks)} callbacks",
            jobs[0],
        )
        return Batch(batch_id, tuple(j.id for j in jobs), tuple(c.id for c in callbacks))

    def _logged_all(self, results: list[EnqueueResult]) -> list[EnqueueResult]:
        return [self._logged(result) for result in results]

    def _logged_pause(self, queue: str, paused: bool) -> None:
        event, did = (Event.PAUSED, "Paused") if paused else (Event.RESUMED, "Resumed")
        log_event(self.logger, logging.INFO, event, f"{did} queue {queue!r}", queue=queue)

    def _logged_cancel(self, job_id: str, cancelled: bool) -> bool:
        if cancelled:
            log_event(
                self.logger,
                logging.INFO,
                Event.CANCELLED,
                f"Cancelled job {job_id}",
                job_id=job_id,
            )
        return cancelled
