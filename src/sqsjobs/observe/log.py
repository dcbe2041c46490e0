"""Structured log records: one per state change, through stdlib ``logging``.

Each record carries ``event`` and the job's ``job_id``, ``job_name``, ``queue``,
``attempt`` and ``tenant`` as ``extra`` fields, so a JSON formatter or a log query can
filter on them (``log_format`` writes them out).
A failure's record also carries its traceback (``traceback``: the handler's frames,
redacted, as the job's record keeps it). Payloads are never logged: they may hold
personal data, and the job id finds them.
The message and every text field are made one line without URL credentials here, so
no caller can let an exception's text forge a record (see ``core.text``).
"""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import Any

from ..core.models import Job
from ..core.text import safe_line
from ..core.tracebacks import traceback_of

LOGGER_NAME = "sqsjobs"
# A failure's traceback, when its handler raised one: a field of its own, so a JSON line
# keeps it as one string and a text line prints it indented below (``log_format``).
TRACEBACK_FIELD = "traceback"
EVENT_PREFIX = "jobs."  # every event's name starts with it; a view may leave it out


class Event(StrEnum):
    ENQUEUE = "jobs.enqueue"
    DUPLICATE = "jobs.duplicate"
    CLAIM = "jobs.claim"
    COMPLETE = "jobs.complete"
    RETRY = "jobs.retry"
    DEAD = "jobs.dead"
    RELEASED = "jobs.released"
    LEASE_LOST = "jobs.lease_lost"
    CANCELLED = "jobs.cancelled"
    PAUSED = "jobs.queue_paused"
    RESUMED = "jobs.queue_resumed"
    WORKER_STARTED = "jobs.worker.started"
    WORKER_STOPPED = "jobs.worker.stopped"
    SIGNAL = "jobs.worker.signal"
    DRAINING = "jobs.worker.draining"
    DRAINED = "jobs.worker.drained"
    CLAIM_FAILED = "jobs.worker.claim_failed"
    HOOK_FAILED = "jobs.hook_failed"
    HEARTBEAT_FAILED = "jobs.heartbeat_failed"
    RUN_FAILED = "jobs.worker.run_failed"
    CRON_FAILED = "jobs.cron_failed"
    RECONCILED = "jobs.reconciled"
    HIGH_CONCURRENCY = "jobs.worker.high_concurrency"
    MEMORY_STORE_IN_PRODUCTION = "jobs.memory_store_in_production"
    MALFORMED_MESSAGE = "jobs.malformed_message"
    UNKNOWN_JOB = "jobs.unknown_job"
    MOVED_BACK = "jobs.moved_back"  # a dead job's message SQS moved back from its DLQ
    DEFERRED = "jobs.deferred"  # a limit or a tenant's cap held a start back
    LIMIT_SLOT = "jobs.limit_slot"  # a limit slot could not be extended or freed
    OPTIONS_DEFAULTED = "jobs.options_defaulted"  # a record missed its handler's options
    PRESENCE = "jobs.worker.presence"  # a worker's presence record failed, or is back


def default_logger(logger: logging.Logger | None) -> logging.Logger:
    return logger if logger is not None else logging.getLogger(LOGGER_NAME)


def job_fields(job: Job) -> dict[str, Any]:
    return {
        "job_id": job.id,
        "job_name": job.name,
        "queue": job.queue,
        "attempt": job.attempts,
        "tenant": job.tenant,
    }


def log_event(
    logger: logging.Logger,
    level: int,
    event: Event,
    message: str,
    job: Job | None = None,
    **extra: Any,
) -> None:
    if not logger.isEnabledFor(level):
        return
    fields: dict[str, Any] = {"event": event.value}
    if job is not None:
        fields.update(job_fields(job))
    fields.update(
        (key, safe_line(value) if isinstance(value, str) else value) for key, value in extra.items()
    )
    trace = traceback_of(extra.get("error", ""))
    if trace is not None:  # already one escaped line per frame (``core.tracebacks``)
        fields[TRACEBACK_FIELD] = trace
    logger.log(level, safe_line(message), extra=fields)
