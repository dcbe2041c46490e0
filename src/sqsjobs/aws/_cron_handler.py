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
from dataclasses import fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..core.errors import JobConfigError, JobIdempotencyConflictError, describe_error
from ..core.requests import EnqueueRequest
from ..core.validation import Span, seconds
from ..cron.declared import cron_class, merged
from ..cron.keys import tick_stamp
from ..handlers.registry import JobRegistry
from ..observe.log import Event, default_logger, log_event
from ..producer.enqueue import prepare
from ..producer.queue import SyncJobQueue

if TYPE_CHECKING:
    from ..cron.schedule import Cron
    from .store.sqs_store import SqsJobStore

CronHandler = Callable[[Mapping[str, Any], Any], dict[str, int]]
"""What ``make_cron_handler`` returns: ``handler(event, context)`` for EventBridge's
every-minute schedule, returning ``{"enqueued": n, "duplicates": m}``."""
# At least the minute between invocations, so consecutive spans leave no gap; at most an
# hour, well inside the store's retention of finished jobs (a day by default), so a tick
# looked at again still finds its job under its key instead of being enqueued anew.
LOOKBACK = Span(minimum=60.0, maximum=3600.0, why="from the minute between invocations to an hour")


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

    Every cron's request is checked here, so a cron the store cannot take fails the
    function's first import rather than each invocation.

    Args:
        store: The store the ticks' jobs are enqueued to.
        crons: ``Cron`` schedules.
        registry: A ``JobRegistry`` whose declared crons (``registry.cron``) run too.
        lookback: Seconds before the scheduled time whose ticks each invocation
            enqueues, 60 to 3600: a missed invocation's ticks are caught up within it.
        clock: Epoch seconds: now, when an event has no ``time``.
        logger: Where its log lines go; left out, the ``sqsjobs`` logger.

    Returns:
        ``handler(event, context)``, returning ``{"enqueued": n, "duplicates": m}`` per
        invocation; a tick that could not be enqueued is logged and the invocation then
        fails, so Lambda's error metric and its retry see it (the retry enqueues only
        what is still missing).

    Raises:
        JobConfigError: No crons at all, a registry that is not a ``JobRegistry``, a
            cron whose request the store cannot take (its queue, its payload), or no
            ``cron`` extra (croniter) installed.
        ValueError: An invalid ``lookback``.
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
    queue = SyncJobQueue(store, clock=clock, logger=logger)
    _check_requests(schedule, queue, store)
    log = default_logger(logger)

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, int]:
        until = min(scheduled_time(event, clock), clock())
        summary = {"enqueued": 0, "duplicates": 0}
        failed: list[Exception] = []
        for cron in schedule:
            for tick in cron.ticks(until - span, until):
                try:
                    duplicate = _enqueue(queue, cron.request(tick))
                except Exception as error:
                    log_event(
                        log,
                        logging.ERROR,
                        Event.CRON_FAILED,
                        f"Cron {cron.name!r} could not enqueue its tick {tick_stamp(tick)}: "
                        f"{describe_error(error)}",
                        error=describe_error(error),
                    )
                    failed.append(error)
                    continue
                summary["duplicates" if duplicate else "enqueued"] += 1
        log.info(
            "Cron pass up to %s: enqueued %d tick(s), %d already enqueued",
            tick_stamp(until),
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


def _enqueue(queue: SyncJobQueue, request: EnqueueRequest) -> bool:
    """Enqueue one tick; whether its job was there already.

    Each tick is its own request, so one that fails leaves the others to be enqueued. A
    key bound to another payload is a tick enqueued before the cron's payload or options
    changed (a deploy within the lookback): that tick has its job, so it counts as there.
    """
    arguments = {field.name: getattr(request, field.name) for field in fields(request)}
    try:
        return queue.enqueue(**arguments).duplicate
    except JobIdempotencyConflictError:
        return True


def _check_requests(crons: Iterable[Cron], queue: SyncJobQueue, store: SqsJobStore) -> None:
    """Each cron's request must be one the store takes, or every invocation would fail."""
    known = list(store.queue_urls)
    now = queue.clock()
    for cron in crons:
        job = prepare(queue.config, cron.request(now), now).job  # the payload's size too
        if job.queue not in known:
            raise JobConfigError(
                "invalid_option",
                f"Cron {cron.name!r} enqueues to queue {job.queue!r}, which this store lacks; "
                f"its queues are {', '.join(known)} (set queue= on the cron)",
            )
