"""AWS Lambda: run jobs from an SQS event source mapping with partial batch responses.

    handler = make_lambda_handler(registry, store=SqsJobStore.from_env())
    reconcile = make_reconcile_handler(store=SqsJobStore.from_env())  # on a schedule
    crons = make_cron_handler(store=SqsJobStore.from_env(), registry=registry)  # each minute

Each record is claimed with the same conditional write a worker uses and run by the same
algorithm (``sqsjobs.worker.run``); only the reporting differs. Lambda deletes every message
not named in ``batchItemFailures``, so a message is named unless its job reached an end:

    completed, dead (already sent to the DLQ) ──► not named: Lambda deletes the message
    settled by the claim without a run: a body that is not a job's (moved to the DLQ),
    a job that already ended or has no record (deleted) ──► not named: nothing to retry
    retry (hidden for its backoff), released at the invocation deadline,
    lease lost, not claimed (a duplicate, not yet due, an AWS error),
    outcome left unrecorded (the store kept failing) ──► named: it returns

Standard queues run the batch's records concurrently; FIFO queues run them in order and
stop at the first record that does not finish, naming it and every record after it. An
execution environment keeps a presence record (``worker.presence``) while it is invoked.

The event is read whole first (``wire.lambda_event``). One that is no SQS event, or has
a record from a queue the store does not know (the function is mapped to another store's
queue, whose messages are not ours to delete), is refused (``JobConfigError``,
``invalid_event``) before anything is done. A record no event source mapping sends (not
an object; ``messageId``, ``receiptHandle``, ``body`` or ``eventSourceARN`` missing or
empty) is skipped, logged and never named: a retry cannot mend it, and an id Lambda does
not know fails the whole batch.

A job's timeout is capped by the invocation's remaining time less ``safety_margin``; a
job cut off there is released (the attempt is not counted), never lost. That deadline
also ends the tries of an outcome's write that keeps failing (heartbeats hold the lease
until then, ``sqsjobs.worker.lease``): the record is left to the next claim after its lease,
and the message is named, so it comes back.

The module loads boto3 only: the handler works through a Lambda-mode store over the
given store's state (``store.lambda_mode``; the store passed in is left as it
was), whose AWS calls run in threads (``asyncio.to_thread``) over clients made once per
container, so no aiobotocore or aiohttp is imported and clients outlive each invocation's
event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.backoff import Backoff
from ..core.models import Job
from ..core.store import watch_claims
from ..core.validation import Span, seconds
from ..handlers.registry import JobRegistry
from ..observe.log import Event, default_logger
from ..observe.metrics import Metrics, MetricsMode, RegisteredNames
from ..observe.outputs import metrics_for, metrics_from_env
from ..worker.presence import Presence
from ..worker.run import Hook, Hooks, JobRun, Outcome, RunSettings
from .store.lambda_mode import LambdaMode, lambda_mode
from .store.sqs_store import SqsJobStore
from .wire.lambda_event import SHOWN, Batch, EventRecord, read_event
from .wire.sqs import Message

if TYPE_CHECKING:
    from ._cron_handler import make_cron_handler as make_cron_handler
    from ._reconcile_handler import ReconcileHandler as ReconcileHandler
    from ._reconcile_handler import make_reconcile_handler as make_reconcile_handler

__all__ = [
    "LambdaHandler",
    "ReconcileHandler",
    "make_cron_handler",
    "make_lambda_handler",
    "make_reconcile_handler",
]

LambdaHandler = Callable[[Mapping[str, Any], Any], dict[str, list[dict[str, str]]]]
"""What ``make_lambda_handler`` returns: ``handler(event, context)`` for Lambda to call,
returning the partial batch response (``{"batchItemFailures": [...]}``)."""
# A margin as long as Lambda's longest timeout would cut every job at once.
SAFETY_MARGIN = Span(maximum=900.0, why="Lambda's longest timeout")
FINISHED = frozenset({Outcome.COMPLETED, Outcome.DEAD})


def make_lambda_handler(
    registry: JobRegistry | Mapping[str, Any],
    *,
    store: SqsJobStore,
    backoff: Backoff | None = None,
    payload_max_bytes: int = 65536,
    safety_margin: float = 3.0,
    concurrency: int = 16,
    on_complete: Hook | None = None,
    on_fail: Hook | None = None,
    on_dead: Hook | None = None,
    logger: logging.Logger | None = None,
    clock: Callable[[], float] = time.time,
    metrics: MetricsMode | Metrics | None = None,
) -> LambdaHandler:
    """A Lambda handler running ``registry``'s jobs from SQS records (see module docs).

    Make it once, at module level, so each warm invocation reuses its clients:
    ``handler = make_lambda_handler(registry, store=SqsJobStore.from_env())``.

    Args:
        registry: The allowlist: a ``JobRegistry``, or a mapping of job name to handler.
        store: The store whose queues the function is mapped to; left as it was (the
            handler runs on a Lambda-mode copy over its state).
        backoff: Retry delays after a failed attempt; left out, ``Backoff()``.
        payload_max_bytes: The largest result a handler may return, as JSON (a larger
            one dead-letters its job: the work was done).
        safety_margin: Seconds before the invocation's deadline at which running jobs
            are cut off and released (their attempts not counted).
        concurrency: Threads for blocking handlers; a standard queue's records all run
            at once, a FIFO queue's in order.
        on_complete: As for ``JobWorker``: called with the job once recorded completed.
        on_fail: As for ``JobWorker``: with the job, the error, whether it will retry
            and the delay before it.
        on_dead: As for ``JobWorker``: with the job and the error.
        logger: Where its log lines go; left out, the ``sqsjobs`` logger.
        clock: Epoch seconds.
        metrics: ``"emf"``, ``"prometheus"``, ``"off"`` or a ``Metrics``; left out,
            ``SQSJOBS_METRICS`` from the environment, else ``"emf"``: Lambda ships stdout
            to CloudWatch Logs, so EMF lines become metrics with no call and no extra
            package (namespace ``SQSJOBS_METRICS_NAMESPACE``, else ``sqsjobs``).

    Returns:
        ``handler(event, context)``, which returns the partial batch response: the
        records to retry (``batchItemFailures``; enable ``ReportBatchItemFailures``).

    Raises:
        JobConfigError: An empty registry or an invalid ``metrics``; the handler raises
            it (``invalid_event``) for an event that is no SQS event of the store's queues.
        ValueError: An invalid ``safety_margin``.
    """
    seconds(safety_margin, "safety_margin", SAFETY_MARGIN, code=None)
    mode = lambda_mode(store)
    worker_id = f"lambda-{uuid.uuid4().hex[:12]}"
    measured = metrics_for(metrics) if metrics is not None else metrics_from_env("emf")
    watch_claims(mode.store, worker_id, measured.refused)
    handlers = JobRegistry.from_handlers(registry)
    runner = _LambdaRunner(
        mode,
        RunSettings(
            store=mode.store,
            registry=handlers,
            backoff=backoff or Backoff(),
            payload_max_bytes=payload_max_bytes,
            clock=clock,
            logger=default_logger(logger),
            worker_id=worker_id,
            hooks=Hooks(on_complete, on_fail, on_dead),
            executor=concurrent.futures.ThreadPoolExecutor(
                max_workers=concurrency, thread_name_prefix="sqsjobs-handler"
            ),
            metrics=RegisteredNames(measured, handlers),  # unknown job names as one value
        ),
        safety_margin,
        concurrency,
    )

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, list[dict[str, str]]]:
        batch = runner.read(event)  # refuses what is no SQS event before anything is done
        failures = asyncio.run(runner.invoke(batch, context))
        return {"batchItemFailures": [{"itemIdentifier": m} for m in failures]}

    return handler


class _LambdaRunner:
    def __init__(self, mode: LambdaMode, settings: RunSettings, margin: float, slots: int) -> None:
        self._mode = mode
        self.presence = Presence(settings, (), slots)  # written as invocations come
        self._settings = settings
        self._margin = margin
        self._queues = {
            url.rstrip("/").rsplit("/", 1)[-1]: q for q, url in mode.store.queue_urls.items()
        }

    def read(self, event: object) -> Batch:
        """The event's records to run and those to skip (``wire.lambda_event``)."""
        return read_event(event, self._queues)

    async def invoke(self, batch: Batch, context: Any) -> list[str]:
        """The message ids to name as failures."""
        cutoff = _remaining(context) - self._margin if context is not None else None
        if batch.skipped:
            self._log_skipped(batch)
        failures: list[str] = []
        present = self.presence.invoked({r.queue for r in batch.records}, len(batch.records))
        try:
            for (queue, fifo), group in _groups(batch.records).items():
                run = self._in_order if fifo else self._together
                failures += await run(queue, [r.message for r in group], cutoff)
        finally:
            await self._mode.background.aclose()  # pending SQS work goes out with this call
            await present
        return failures

    def _log_skipped(self, batch: Batch) -> None:
        count = sum(len(labels) for labels in batch.skipped.values())
        parts = []
        for reason, labels in batch.skipped.items():
            more = ", ..." if len(labels) > SHOWN else ""
            parts.append(f"{len(labels)} {reason}: {', '.join(labels[:SHOWN])}{more}")
        summary = "; ".join(parts)
        self._settings.logger.warning(
            "Skipped %d of %d event record(s) that no SQS event source mapping sends; "
            "nothing was done with them and they are not reported: %s",
            count,
            count + len(batch.records),
            summary,
            extra={"event": Event.MALFORMED_MESSAGE, "skipped": count, "error": summary},
        )

    async def _together(
        self, queue: str, messages: list[Message], cutoff: float | None
    ) -> list[str]:
        jobs, settled = await self._claim(queue, messages)
        outcomes = await asyncio.gather(*(self._run(job, cutoff) for job, _ in jobs))
        done = settled | {
            m.message_id for (_, m), o in zip(jobs, outcomes, strict=True) if o in FINISHED
        }
        return [m.message_id for m in messages if m.message_id not in done]

    async def _in_order(
        self, queue: str, messages: list[Message], cutoff: float | None
    ) -> list[str]:
        for index, message in enumerate(messages):
            jobs, settled = await self._claim(queue, [message])
            outcome = await self._run(jobs[0][0], cutoff) if jobs else None
            if outcome not in FINISHED and message.message_id not in settled:
                return [m.message_id for m in messages[index:]]
        return []

    async def _claim(
        self, queue: str, messages: list[Message]
    ) -> tuple[list[tuple[Job, Message]], set[str]]:
        """Claim what the messages deliver; the claim disposes of those that need no run
        (the ids of those it settled for good come second)."""
        worker_id, now = self._settings.worker_id, self._settings.clock()
        try:
            claims = self._mode.claims
            deliveries, settled = await claims.claim_messages(queue, messages, worker_id, now)
        except Exception:
            self._settings.logger.exception(
                "Claiming %d record(s) from %r failed; they return after their visibility",
                len(messages),
                queue,
                extra={"event": Event.CLAIM_FAILED, "queue": queue},
            )
            return [], set()
        return [(delivery.job, delivery.message) for delivery in deliveries], settled

    async def _run(self, job: Job, cutoff: float | None) -> Outcome | None:
        left = None if cutoff is None else max(0.0, cutoff - time.monotonic())
        try:
            return await JobRun(job, self._settings, cutoff=left).execute()
        except Exception:  # not the handler's nor the store's: those have outcomes
            self._settings.logger.exception(
                "Running job %s raised outside its handler; its message is reported and returns",
                job.id,
                extra={"event": Event.RUN_FAILED, "job_id": job.id},
            )
            return None


def _groups(records: Sequence[EventRecord]) -> dict[tuple[str, bool], list[EventRecord]]:
    groups: dict[tuple[str, bool], list[EventRecord]] = {}
    for record in records:
        groups.setdefault((record.queue, record.fifo), []).append(record)
    return groups


def _remaining(context: Any) -> float:
    """Monotonic deadline of this invocation, from the context's remaining milliseconds."""
    return time.monotonic() + float(context.get_remaining_time_in_millis()) / 1000


def __getattr__(name: str) -> Any:
    """``make_cron_handler`` (``sqsjobs.aws._cron_handler``) and ``make_reconcile_handler``
    (``sqsjobs.aws._reconcile_handler``) load when first named: most functions run jobs
    and never enqueue cron ticks or reconcile."""
    if name == "make_cron_handler":
        from ._cron_handler import make_cron_handler

        return make_cron_handler
    if name in ("make_reconcile_handler", "ReconcileHandler"):
        from . import _reconcile_handler

        return getattr(_reconcile_handler, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
