"""A job's record as the public API hands it out, and the statuses it moves through.

A ``Job`` is frozen and does no I/O: it is a snapshot of a record, never a handle on a
store, so holding one cannot change anything and reading one again means asking the
store again.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from .history import HistoryEntry


class JobStatus(StrEnum):
    """Where a job is in its life; the rules between them live in ``lifecycle``."""

    WAITING = "waiting"  # for its parents (``enqueue(after=...)``) to complete
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
    # The job's message group (``enqueue(group=...)``, else its tenant, else its queue):
    # on a FIFO queue its jobs run one at a time in enqueue order; on a standard queue SQS
    # fair queues keep one group's burst from delaying the others. A tenant's job is
    # grouped within its tenant, and this is the group as stored and sent: ``group="x"``
    # with tenant ``acme`` reads ``acme/x`` (``validation.tenant_group``). ``None`` only
    # on records written before groups existed (``message_group`` then derives it).
    group: str | None = None
    # True when the producer passed ``timeout``. The run enforces ``timeout`` either way;
    # this only tells a chosen timeout from a default (``worker.declared_options``).
    # Stores keep it; dumps and reprs leave it out, so a record's JSON (``--json``, code
    # that dumps jobs) has exactly the fields above, and a job read back from that JSON
    # equals the job unless its timeout was explicit.
    timeout_explicit: bool = Field(default=False, exclude=True, repr=False)
    # The W3C trace context of the span that enqueued the job (``traceparent``, and
    # ``tracestate`` when it had one), so each run's span links back to it; ``None`` when
    # the producer had no OpenTelemetry tracer provider (``observe.tracing``).
    trace_context: dict[str, str] | None = None
    # The traceback of the failure ``last_error`` names, from the handler's first frame,
    # redacted and at most 8 KiB (``core.tracebacks``); ``None`` when that failure had
    # none (a timeout, a lease that ran out) or a release that kept none wrote it.
    last_traceback: str | None = None
    # The last ``HISTORY_KEPT`` attempts and operator actions, oldest first, and how many
    # entries there were in all (``core.history``): empty and 0 on records written before
    # histories were kept.
    history: list[HistoryEntry] = Field(default_factory=list)
    history_count: int = 0
    # Free-form tags given at enqueue (``enqueue(labels=...)``), kept and returned as
    # they were; a data field (``core.fields``), empty on records written without any.
    labels: dict[str, str] = Field(default_factory=dict)
    # The jobs it waits for (``enqueue(after=...)``), in the order given: it stays
    # ``waiting`` until each has completed, and its handler reads their results
    # (``ctx.parent_results``); a data field (``core.fields``), empty when it has none.
    after: list[str] = Field(default_factory=list)
    # The jobs that wait (or waited) for this one, by id, sorted: kept by the store as
    # children name it (``after``), never given at enqueue; empty when none did.
    children: list[str] = Field(default_factory=list)
    # The batch it belongs to (``queue.batch``), and for one of its callbacks which one
    # (``"on_complete"``, ``"on_success"``; ``None`` for the batch's jobs): ``core.batches``.
    batch_id: str | None = None
    batch_callback: str | None = None
    # How far the run has come, as its handler last reported it (``ctx.progress``): a JSON
    # value of at most 1 KiB, written with the run's heartbeats and its outcome
    # (``core.progress``); ``None`` until a run reports any.
    progress: JsonValue | None = None
    # Its debounce key (``enqueue(debounce_key=..., debounce=...)``): until it starts, an
    # enqueue with the same key, queue and tenant replaces its payload and moves its
    # ``run_at``; ``None`` for a job enqueued without one.
    debounce_key: str | None = None


def constructed_job(**values: Any) -> Job:
    """A ``Job`` from values sqsjobs checked or wrote itself, without validating them again.

    ``Job.model_construct`` runs the ``default_factory`` of each field left out, and
    pydantic 2 inspects a factory's signature on every such call (through
    ``inspect.signature`` of a builtin: a tokenizer run), which made up most of an
    enqueue's CPU on the memory store and five sixths of decoding a record. So each
    left-out field with a factory gets a new empty value here first.
    """
    for name, factory in _FACTORIES:
        if name not in values:
            values[name] = factory()
    return Job.model_construct(**values)


_FACTORIES = tuple(
    (name, cast("Any", field.default_factory))
    for name, field in Job.model_fields.items()
    if field.default_factory is not None
)


def untenanted_group(queue: str) -> str:
    """The group of a queue's jobs that have neither a tenant nor a group of their own.

    No tenant id can take it: tenant ids have no ``:`` (and a tenant's own groups are
    ``{tenant}`` or ``{tenant}/...``). Named after the queue alone, a tenant called like
    the queue (``default``, ``billing``) shared it, and one of its delayed jobs held every
    untenanted job of a FIFO queue back.
    """
    return f"queue:{queue}"


def message_group(job: Job) -> str:
    """The group a job's messages carry: the one its record keeps.

    Every enqueue stores one (``untenanted_group`` when there is neither a tenant nor a
    group given). Records written before groups were stored were sent with their tenant,
    else their queue's name, and re-sends of them (a reconcile, a redrive) send that
    unchanged; so does any record for the group it was written with, so FIFO order holds
    across an upgrade.
    """
    return job.group or job.tenant or job.queue
