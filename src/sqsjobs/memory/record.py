"""The memory store's mutable record: epoch floats and JSON text, copied out as a ``Job``.

Payload and result are held as JSON text and parsed on every read, so each ``Job``
handed out owns fresh containers and no caller can mutate the store through one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..core.fields import DATA_FIELDS
from ..core.history import (
    ATTEMPT,
    COMPLETED,
    EXPIRED,
    HistoryEntry,
    appended,
    attempt_entry,
    completion_entry,
)
from ..core.lifecycle import ClaimDecision, claim_decision
from ..core.models import Job, JobStatus, constructed_job
from ..core.times import epoch, utc, utc_or_none
from ..core.tracebacks import traceback_of
from ..core.validation import dump_json

Progress = str | None  # a run's progress as JSON text, when a write carried one


@dataclass(slots=True)
class Record:
    id: str
    queue: str
    name: str
    payload_json: str
    status: JobStatus
    attempts: int
    max_attempts: int
    run_at: float
    created_at: float
    updated_at: float
    lease_until: float | None
    locked_by: str | None
    lease_token: str | None
    lease: float
    timeout: float
    timeout_explicit: bool
    priority: int
    idempotency_key: str | None
    tenant: str | None
    last_error: str | None
    completed_at: float | None
    result_json: str | None
    fingerprint: str | None
    expires_at: float | None = None
    version: int = 0
    group: str | None = None  # informational here: claim order stays priority order
    trace_context: dict[str, str] | None = None  # copied in and out: no caller shares it
    last_traceback: str | None = None  # the failure's that ``last_error`` names
    history: list[HistoryEntry] = field(default_factory=list)  # frozen entries: shared safely
    history_count: int = 0
    started_at: float | None = None  # when the running attempt was claimed
    # The data fields (``core.fields``) not at their empty value, as JSON text.
    data_json: dict[str, str] = field(default_factory=dict)
    progress_json: str | None = None  # as the run last reported it (``core.progress``)
    awaiting: set[str] = field(default_factory=set)  # parents not yet completed (``dependencies``)
    children: set[str] = field(default_factory=set)  # jobs that wait, or waited, for this one
    batch_id: str | None = None  # its batch (``batches``), and which callback of it, if one
    batch_callback: str | None = None
    debounce_key: str | None = None  # one unstarted job per key (``debounce``)

    @classmethod
    def from_job(cls, job: Job, fingerprint: str | None) -> Record:
        return cls(
            id=job.id,
            queue=job.queue,
            name=job.name,
            payload_json=dump_json(job.payload),
            status=job.status,
            attempts=job.attempts,
            max_attempts=job.max_attempts,
            run_at=epoch(job.run_at),
            created_at=epoch(job.created_at),
            updated_at=epoch(job.updated_at),
            lease_until=None,
            locked_by=None,
            lease_token=None,
            lease=job.lease,
            timeout=job.timeout,
            timeout_explicit=job.timeout_explicit,
            priority=job.priority,
            idempotency_key=job.idempotency_key,
            tenant=job.tenant,
            last_error=None,
            completed_at=None,
            result_json=None,
            fingerprint=fingerprint,
            group=job.group,
            trace_context=None if job.trace_context is None else dict(job.trace_context),
            batch_id=job.batch_id,
            batch_callback=job.batch_callback,
            debounce_key=job.debounce_key,
            data_json={
                f.name: dump_json(getattr(job, f.name))
                for f in DATA_FIELDS
                if getattr(job, f.name) != f.empty
            },
        )

    def to_job(self) -> Job:
        return constructed_job(
            id=self.id,
            queue=self.queue,
            name=self.name,
            payload=json.loads(self.payload_json),
            status=self.status,
            attempts=self.attempts,
            max_attempts=self.max_attempts,
            run_at=utc(self.run_at),
            created_at=utc(self.created_at),
            updated_at=utc(self.updated_at),
            lease_until=utc_or_none(self.lease_until),
            locked_by=self.locked_by,
            lease_token=self.lease_token,
            lease=self.lease,
            timeout=self.timeout,
            timeout_explicit=self.timeout_explicit,
            priority=self.priority,
            idempotency_key=self.idempotency_key,
            tenant=self.tenant,
            last_error=self.last_error,
            completed_at=utc_or_none(self.completed_at),
            result=None if self.result_json is None else json.loads(self.result_json),
            group=self.group,
            trace_context=None if self.trace_context is None else dict(self.trace_context),
            last_traceback=self.last_traceback,
            history=list(self.history),
            history_count=self.history_count,
            progress=None if self.progress_json is None else json.loads(self.progress_json),
            children=sorted(self.children),
            debounce_key=self.debounce_key,
            batch_id=self.batch_id,
            batch_callback=self.batch_callback,
            **{name: json.loads(value) for name, value in self.data_json.items()},
        )

    def keep_progress(self, progress: Progress) -> None:
        """Keep the progress a heartbeat or an outcome carried (``None``: none did)."""
        if progress is not None:
            self.progress_json = progress

    def set_error(self, error: str) -> None:
        """``last_error`` and, when the failure carried one, its traceback (else none)."""
        self.last_error, self.last_traceback = str(error), traceback_of(error)

    def note(self, entry: HistoryEntry) -> None:
        """Add ``entry`` to the job's history, the oldest left out beyond its bound."""
        self.history = appended(self.history, entry)
        self.history_count += 1

    def note_attempt(
        self, outcome: str, now: float, error: str | None = None, *, kind: str = ATTEMPT
    ) -> None:
        """The running attempt ended with ``outcome`` (call before the lease is cleared).

        A lease found over (``EXPIRED``) is noted without its start, as ``SqsJobStore``,
        which learns of it from the record alone, notes it.
        """
        started = None if kind == EXPIRED else self.started_at
        run = (started, self.locked_by)
        self.note(attempt_entry(now, self.attempts, run, outcome, error, kind=kind))

    def note_completion(self, now: float) -> None:
        """The running attempt completed: a bare entry when nothing came before it, as
        ``SqsJobStore`` keeps one (``history.completion_entry``), else a full one."""
        if self.history_count:
            self.note_attempt(COMPLETED, now)
        else:
            self.note(completion_entry(now, self.attempts))

    def ready_entry(self) -> tuple[int, float, float, str, int]:
        """Heap key for claim order: priority desc, run_at, created_at, id.

        Ordered by the instants a reader sees (``Job``'s datetimes, to the microsecond):
        a job released at ``now`` and one enqueued at the same ``now`` have equal
        ``run_at`` for every reader, so they must tie here too, whatever digits below
        the microsecond the clock had (an enqueue's instants pass through a datetime).
        """
        run_at, created_at = epoch(utc(self.run_at)), epoch(utc(self.created_at))
        return (-self.priority, run_at, created_at, self.id, self.version)

    def claim_decision(self, now: float) -> ClaimDecision:
        return claim_decision(
            self.status, self.run_at, self.lease_until, self.attempts, self.max_attempts, now
        )
