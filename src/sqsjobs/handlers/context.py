"""What a handler runs with: its ``JobContext`` and the logger bound to its job.

Apart from the registry because the run builds a context for every job, and the
registry's declarations (defaults, models, crons) are no part of that.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ..core.batches import BatchStatus
from ..core.models import Job
from ..observe.log import job_fields


class JobLogAdapter(logging.LoggerAdapter[logging.Logger]):
    """Adds the job's fields to every record, keeping the caller's own ``extra``.

    A plain ``LoggerAdapter`` replaces the caller's ``extra`` before Python 3.13.
    """

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        kwargs["extra"] = {**(kwargs.get("extra") or {}), **(self.extra or {})}
        return msg, kwargs


@dataclass
class JobContext:
    """What a handler gets besides its payload: the job, its attempt, cancellation, logging."""

    job: Job
    payload: Any
    attempt: int
    cancelled: asyncio.Event
    log: logging.LoggerAdapter[logging.Logger]
    beat: Callable[[], Awaitable[bool]] = field(repr=False)
    # Keeps a checked progress value for the run's next heartbeat and its outcome.
    report: Callable[[Any], None] = field(repr=False, default=lambda value: None)
    # Each parent's result by id (``enqueue(after=...)``; ``worker.parents``): empty for a
    # job without parents.
    parent_results: Mapping[str, Any] = field(default_factory=dict)
    # For a batch's callback (``queue.batch(on_complete=..., on_success=...)``), the
    # batch's figures as the run began; ``None`` for every other job.
    batch: BatchStatus | None = None

    async def heartbeat(self) -> bool:
        """Extend the lease now; ``False`` means it was lost and the run is being cancelled."""
        return await self.beat()

    async def progress(self, value: Any) -> None:
        """Report how far the run has come: a JSON value of at most 1 KiB (``0.42``,
        ``{"done": 420, "total": 1000}``), kept on the record as ``Job.progress``.

        Nothing is written now: the value goes with the run's next heartbeat (one every
        lease / 3) and with its outcome, so reporting often costs no request; the last
        value reported wins. ``jobs show`` and the dashboard show it (the dashboard unless
        ``show_payloads=False``). Raises ``JobConfigError("invalid_payload")`` for a value that
        is not JSON, is ``None``, or is larger than 1 KiB.
        """
        self.report(value)


def context_logger(logger: logging.Logger, job: Job) -> JobLogAdapter:
    return JobLogAdapter(logger, job_fields(job))
