"""The values that cross the public API: job records, enqueue requests and results, pages.

They are frozen and do no I/O: a ``Job`` is a snapshot of a record, never a handle on a
store, so holding one cannot change anything and reading one again means asking the
store again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class JobStatus(StrEnum):
    """Where a job is in its life; the rules between them live in ``_lifecycle``."""

    QUEUED = "queued"
    DELAYED = "delayed"
    RUNNING = "running"
    COMPLETED = "completed"
    DEAD = "dead"
    CANCELLED = "cancelled"


class Job(BaseModel):
    """One job's record as a store last saw it (every datetime is aware UTC)."""

    # Built on first validation: stores make records with model_construct, so a Lambda
    # cold start that never validates a Job never pays for its schema.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str
    queue: str
    name: str
    payload: JsonValue
    status: JobStatus
    attempts: int
    max_attempts: int
    run_at: datetime
    created_at: datetime
    updated_at: datetime
    lease_until: datetime | None
    locked_by: str | None
    lease_token: str | None
    lease: float
    timeout: float
    priority: int
    idempotency_key: str | None
    tenant: str | None
    last_error: str | None
    completed_at: datetime | None
    result: JsonValue | None
    # True when the producer passed ``timeout``; otherwise it is a default, and a handler
    # that declares its own timeout replaces it when the job runs (``HandlerDefaults``).
    # Stores keep it; dumps and reprs leave it out, so a record's JSON (``--json``, code
    # that dumps jobs) has exactly the fields above, and a job read back from that JSON
    # equals the job unless its timeout was explicit.
    timeout_explicit: bool = Field(default=False, exclude=True, repr=False)


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
    delay: float | timedelta | None = None
    run_at: datetime | None = None
    priority: int = 0
    max_attempts: int | None = None
    timeout: float | timedelta | None = None
    lease: float | timedelta | None = None


@dataclass(frozen=True)
class JobFilter:
    """Which records ``list`` returns; ``None`` means any."""

    queue: str | None = None
    statuses: frozenset[JobStatus] | None = None
    name: str | None = None
    tenant: str | None = None

    def matches(self, queue: str, status: JobStatus, name: str, tenant: str | None) -> bool:
        return (
            (self.queue is None or queue == self.queue)
            and (self.statuses is None or status in self.statuses)
            and (self.name is None or name == self.name)
            and (self.tenant is None or tenant == self.tenant)
        )


@dataclass(frozen=True)
class JobPage:
    """One page of ``list``: pass ``next_cursor`` back for the next; ``None`` at the end."""

    jobs: Sequence[Job]
    next_cursor: str | None
