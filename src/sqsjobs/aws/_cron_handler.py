"""Cron for deployments with no worker process: a Lambda function EventBridge runs each minute.

    crons = make_cron_handler(store=SqsJobStore.from_env(), registry=registry)

The function keeps no state. Each invocation enqueues every tick in
``(time - lookback, time]``, where ``time`` is the scheduled event's ``time`` (now when
the event has none, and never later than now, so no tick is enqueued before it is due),
each under the key a worker uses, ``cron/{name}/{tick}``. So an invocation that overlaps
another, is repeated, or comes late enqueues nothing twice, and a tick whose invocation
was missed is enqueued by the next one within ``lookback``. Ticks come from ``Cron``
itself (``Cron.ticks``), as a worker's do.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .._crons import cron_class, merged
from .._errors import JobConfigError, describe_error
from .._handlers import JobRegistry
from .._log import Event, default_logger, log_event
from .._queue import SyncJobQueue
from .._validation import Span, seconds

if TYPE_CHECKING:
    from .._cron import Cron
    from .store.sqs_store import SqsJobStore

CronHandler = Callable[[Mapping[str, Any], Any], dict[str, int]]
# At least the minute between invocations, so consecutive spans leave no gap; at most an
# hour, well inside the store's retention of finished jobs (a day by default), so a tick
# looked at again still finds its job under its key instead of being enqueued anew.
LOOKBACK = Span(minimum=60.0, maximum=3600.0, why="a minute between invocations at least")


def make_cron_handler(
    *,
    store: SqsJobStore,
    crons: Iterable[Cron] = (),
    registry: JobRegistry | None = None,
    lookback: float = 300.0,
    clock: Callable[[], float] = time.time,
    logger: logging.Logger | None = None,
) -> CronHandler:
    """A handler for an every-minute schedule enqueuing ``crons`` and ``registry``'s crons.

    Returns ``{"enqueued": n, "duplicates": m}`` per invocation; a tick that could not be
    enqueued is logged and the invocation then fails, so Lambda's error metric and its
    retry see it (the retry enqueues only what is still missing).
    """
    span = seconds(lookback, "lookback", LOOKBACK, code=None)
    cron_class()  # without the parser: one line naming the extra, before the first event
    if registry is not None and not isinstance(registry, JobRegistry):
        raise JobConfigError(
            "invalid_option", f"registry must be a JobRegistry, got {type(registry).__name__}"
        )
    schedule = merged(crons, registry.crons if registry is not None else ())
    if not schedule:
        raise JobConfigError(
            "invalid_option",
            "make_cron_handler has no crons: pass crons=[Cron('0 3 * * *', 'reports.nightly')] "
            "or a registry with registry.cron(...) declarations",
        )
    _check_queues(schedule, store)
    queue = SyncJobQueue(store, clock=clock, logger=logger)
    log = default_logger(logger)

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, int]:
        until = min(scheduled_time(event, clock), clock())
        summary = {"enqueued": 0, "duplicates": 0}
        failed: list[Exception] = []
        for cron in schedule:
            requests = [cron.request(tick) for tick in cron.ticks(until - span, until)]
            try:
                results = queue.enqueue_many(requests) if requests else []
            except Exception as error:
                log_event(
                    log,
                    logging.ERROR,
                    Event.CRON_FAILED,
                    f"Cron {cron.name!r} could not enqueue its ticks: {describe_error(error)}",
                    error=describe_error(error),
                )
                failed.append(error)
                continue
            summary["duplicates"] += sum(result.duplicate for result in results)
            summary["enqueued"] += sum(not result.duplicate for result in results)
        log.info(
            "Cron pass up to %s: enqueued %d tick(s), %d already enqueued",
            datetime.fromtimestamp(until, UTC).isoformat(timespec="seconds"),
            summary["enqueued"],
            summary["duplicates"],
            extra=summary,
        )
        if failed:
            raise failed[0]
        return summary

    return handler


def scheduled_time(event: Mapping[str, Any], clock: Callable[[], float]) -> float:
    """The event's ``time`` (EventBridge's scheduled instant, ISO 8601), else now."""
    text = event.get("time") if isinstance(event, Mapping) else None
    if not isinstance(text, str):
        return clock()
    try:
        instant = datetime.fromisoformat(text)
    except ValueError:
        return clock()
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return instant.timestamp()


def _check_queues(crons: Iterable[Cron], store: SqsJobStore) -> None:
    """Each cron's queue must be one of the store's, or every invocation would fail."""
    known = list(store.queue_urls)
    for cron in crons:
        queue = cron.options.get("queue") or "default"
        if queue not in known:
            raise JobConfigError(
                "invalid_option",
                f"Cron {cron.name!r} enqueues to queue {queue!r}, which this store lacks; "
                f"its queues are {', '.join(known)} (set queue= on the cron)",
            )
