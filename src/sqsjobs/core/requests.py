"""What producers and operators exchange with a store: requests, results, filters, pages.

Apart from ``models`` because a Lambda function that only runs jobs needs none of them:
the handler's import stays free of building their classes (``bench/lambda_import.py``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any

from .lifecycle import TERMINAL
from .models import Job, JobStatus


@dataclass(frozen=True)
class EnqueueResult:
    """What ``enqueue`` did: wrote ``job``, or found it already there for the key."""

    job: Job
    duplicate: bool


@dataclass(frozen=True)
class EnqueueRequest:
    """The keyword arguments of ``enqueue()`` as a value, for ``enqueue_many``."""

    name: str
    payload: Any = None
    queue: str | None = None
    idempotency_key: str | None = None
    tenant: str | None = None
    group: str | None = None
    delay: float | timedelta | None = None
    run_at: datetime | None = None
    priority: int = 0
    max_attempts: int | None = None
    timeout: float | timedelta | None = None
    lease: float | timedelta | None = None
    labels: Mapping[str, str] | None = None
    after: Sequence[str] | None = None
    debounce_key: str | None = None
    debounce: float | timedelta | None = None


StatusFilter = JobStatus | str | Iterable[JobStatus | str] | None  # list()'s status=

ENQUEUE_OPTIONS: frozenset[str] = frozenset(
    f.name for f in fields(EnqueueRequest) if f.name not in ("name", "payload")
)


@dataclass(frozen=True)
class JobFilter:
    """Which records ``list`` returns, ``None`` meaning any, and in which order.

    ``list`` walks ``(created_at, id)`` oldest first, or with ``newest_first`` from the
    other end: what an operator looking for recent failures wants first. A page's cursor
    remembers the direction and continues only a list running the same way. The default
    is the order ``list`` has always had, so a filter built without it reads as before.
    """

    queue: str | None = None
    statuses: frozenset[JobStatus] | None = None
    name: str | None = None
    tenant: str | None = None
    newest_first: bool = False

    def matches(self, queue: str, status: JobStatus, name: str, tenant: str | None) -> bool:
        """Whether a job with these fields is one the filter selects (``None``: any)."""
        return (
            (self.queue is None or queue == self.queue)
            and (self.statuses is None or status in self.statuses)
            and (self.name is None or name == self.name)
            and (self.tenant is None or tenant == self.tenant)
        )


def ended_only(statuses: Collection[JobStatus | str] | None) -> bool:
    """Whether ``statuses`` names ended ones alone (completed, dead, cancelled).

    Views list such jobs newest first unless asked otherwise: the history they show only
    grows, and its oldest end is what an operator needs least, while open work is read in
    the order it will run.
    """
    return bool(statuses) and all(JobStatus(status) in TERMINAL for status in statuses or ())


@dataclass(frozen=True)
class JobPage:
    """One page of ``list``: pass ``next_cursor`` back for the next; ``None`` at the end."""

    jobs: Sequence[Job]
    next_cursor: str | None
