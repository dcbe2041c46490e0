"""Turning an enqueue request into a job record: the one copy both producers share.

``JobQueue`` and ``SyncJobQueue`` differ only in how they call the store; everything
before that (validation, defaults, serialization, the idempotency fingerprint) happens
here, before anything is written.

Defaults, most specific first: the enqueue's own argument, then what the job's handler
declares when the producer was given the registry (``@registry.handler(name, queue=...,
max_attempts=..., timeout=..., lease=...)``), then the producer's ``default_*`` options.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.backoff import Backoff
from ..core.errors import JobConfigError
from ..core.fields import DATA_FIELDS
from ..core.idempotency import fingerprint as fingerprint_of
from ..core.lifecycle import initial_status
from ..core.models import Job, JobStatus, constructed_job, untenanted_group
from ..core.requests import EnqueueRequest, JobFilter
from ..core.times import utc
from ..core.validation import (
    DELAY,
    LEASE,
    TIMEOUT,
    Span,
    check_group,
    check_idempotency_key,
    check_job_name,
    check_queue_name,
    check_tenant,
    checked_json,
    due_time,
    duration,
    integer,
    page_limit,
    priority,
    seconds,
)

if TYPE_CHECKING:
    from ..handlers.registry import HandlerDefaults, JobRegistry


@dataclass(frozen=True)
class QueueConfig:
    """A producer's validated settings; built once, at construction."""

    default_queue: str
    payload_max_bytes: int
    default_max_attempts: int
    default_timeout: float
    default_lease: float
    backoff: Backoff
    clock: Callable[[], float]
    registry: JobRegistry | None = None

    @classmethod
    def build(
        cls,
        store: object,
        *,
        default_queue: str,
        payload_max_bytes: int,
        default_max_attempts: int,
        default_timeout: float,
        default_lease: float,
        backoff: Backoff,
        clock: Callable[[], float],
        registry: JobRegistry | None = None,
    ) -> QueueConfig:
        if store is None:
            raise JobConfigError(
                "store_required",
                "A job store is required: MemoryJobStore() for tests and single processes, "
                "SqsJobStore for production.",
            )
        cap = _payload_cap(payload_max_bytes, store)
        max_attempts = integer(default_max_attempts, "default_max_attempts", minimum=1, code=None)
        timeout = seconds(default_timeout, "default_timeout", TIMEOUT, code=None)
        lease = seconds(default_lease, "default_lease", LEASE, code=None)
        if not isinstance(backoff, Backoff):
            raise ValueError(f"backoff must be a Backoff, got {type(backoff).__name__}")
        return cls(
            default_queue=check_queue_name(default_queue),
            payload_max_bytes=cap,
            default_max_attempts=max_attempts,
            default_timeout=timeout,
            default_lease=lease,
            backoff=backoff,
            clock=clock,
            registry=_registry(registry),
        )

    def defaults_for(self, name: str) -> JobDefaults:
        """The options a job ``name`` gets when its enqueue leaves them out.

        The registry is read at each enqueue, so a handler registered after the producer
        was built counts too.
        """
        mine = JobDefaults(
            self.default_queue, self.default_max_attempts, self.default_timeout, self.default_lease
        )
        return mine if self.registry is None else mine.under(self.registry.defaults(name))


@dataclass(frozen=True)
class JobDefaults:
    queue: str
    max_attempts: int
    timeout: float
    lease: float

    def under(self, handler: HandlerDefaults) -> JobDefaults:
        """These defaults, with what ``handler`` declares taking their place."""
        return JobDefaults(
            _given(handler.queue, self.queue),
            _given(handler.max_attempts, self.max_attempts),
            _given(handler.timeout, self.timeout),
            _given(handler.lease, self.lease),
        )


T = TypeVar("T")


def _given(value: T | None, default: T) -> T:
    return default if value is None else value


def _registry(registry: object) -> JobRegistry | None:
    if registry is None:
        return None
    from ..handlers.registry import JobRegistry  # loaded already: the caller built the registry

    if not isinstance(registry, JobRegistry):
        raise ValueError(
            f"registry must be a JobRegistry (its handlers' defaults apply to enqueues), "
            f"got {type(registry).__name__}"
        )
    return registry


def _payload_cap(value: object, store: object) -> int:
    """``payload_max_bytes``, within what ``store`` can hold if it says (``max_payload_bytes``)."""
    cap = integer(value, "payload_max_bytes", minimum=1, code=None)
    limit = getattr(store, "max_payload_bytes", None)
    if limit is not None and cap > limit:
        raise ValueError(f"payload_max_bytes must be <= {limit} for this store, got {cap}")
    return cap


@dataclass(frozen=True)
class Prepared:
    """A validated request: the record to write and its idempotency fingerprint."""

    job: Job
    fingerprint: str | None


def prepare(config: QueueConfig, request: EnqueueRequest, now: float) -> Prepared:
    """Validate ``request`` and build its record; raises ``JobConfigError``, writes nothing."""
    name = check_job_name(request.name)
    defaults = config.defaults_for(name)
    queue = defaults.queue if request.queue is None else check_queue_name(request.queue)
    key = (
        None if request.idempotency_key is None else check_idempotency_key(request.idempotency_key)
    )
    tenant = None if request.tenant is None else check_tenant(request.tenant)
    group = check_group(request.group, tenant) if request.group is not None else tenant
    group = group or untenanted_group(queue)
    debounced = _debounced(request, key)
    run_at = _run_at(request, now) if debounced is None else now + debounced[1]
    payload, _ = checked_json(request.payload, config.payload_max_bytes)
    if config.registry is not None:
        check_handled(config.registry, name, payload)
    data = {field.name: field.check(getattr(request, field.name)) for field in DATA_FIELDS}
    job = constructed_job(
        id=uuid.uuid4().hex,
        queue=queue,
        name=name,
        payload=payload,
        status=initial_status(run_at, now, data["after"]),
        attempts=0,
        max_attempts=_option_int(request.max_attempts, defaults.max_attempts),
        run_at=utc(run_at),
        created_at=utc(now),
        updated_at=utc(now),
        lease_until=None,
        locked_by=None,
        lease_token=None,
        lease=_option_seconds(request.lease, defaults.lease, "lease", LEASE),
        timeout=_option_seconds(request.timeout, defaults.timeout, "timeout", TIMEOUT),
        priority=priority(request.priority),
        idempotency_key=key,
        tenant=tenant,
        last_error=None,
        completed_at=None,
        result=None,
        group=group,
        timeout_explicit=request.timeout is not None,
        debounce_key=None if debounced is None else debounced[0],
        **data,
    )
    return Prepared(job, None if key is None else fingerprint_of(name, tenant, payload))


def check_handled(registry: JobRegistry, name: str, payload: Any) -> None:
    """A producer that knows the registry refuses what a worker could only dead-letter:
    a name with no handler (a typo, another registry), a payload the handler's model
    refuses. Both are ``JobConfigError`` before anything is written."""
    from ..core.errors import JobFatalError
    from ..core.text import listed_names

    spec = registry.get(name)
    if spec is None:
        raise JobConfigError(
            "invalid_name",
            f"Job {name!r} has no handler in this producer's registry (handlers: "
            f"{listed_names(registry)}): a typo, or not the registry the workers run?",
        )
    try:
        spec.parse(payload)
    except JobFatalError as refused:  # names where and how, never what the payload held
        raise JobConfigError("invalid_payload", f"Job {name!r}: {refused}") from None


DEBOUNCE = Span(maximum=12 * 3600.0, why="12 hours")


def check_debounce(key: object, debounce: object) -> tuple[str, float] | None:
    """A debounce key (an idempotency key's grammar) and its seconds, given together;
    ``None`` when neither is."""
    if key is None and debounce is None:
        return None
    if key is None or debounce is None:
        raise JobConfigError(
            "invalid_option", "Pass debounce_key and debounce together (a key and its seconds)"
        )
    seconds = duration(debounce, "debounce", DEBOUNCE, code="invalid_option")
    if seconds <= 0:
        raise JobConfigError("invalid_option", f"Invalid debounce {debounce!r}: must be > 0")
    return check_idempotency_key(key, "debounce key"), seconds


def _debounced(request: EnqueueRequest, key: str | None) -> tuple[str, float] | None:
    """The debounce key and seconds, refused beside what they would contradict: a key
    of its own (one job per key for good, not until it starts), parents (a debounced job
    waits for its burst to end, not for other jobs) or a time of its own."""
    debounced = check_debounce(request.debounce_key, request.debounce)
    if debounced is None:
        return None
    clash = [
        name
        for name, given in (
            ("idempotency_key", key),
            ("after", request.after),
            ("delay", request.delay),
            ("run_at", request.run_at),
        )
        if given
    ]
    if clash:
        raise JobConfigError(
            "invalid_option",
            f"debounce_key does not go with {', '.join(clash)}: a debounced job runs "
            "debounce seconds after its burst's last enqueue, once",
        )
    return debounced


def _run_at(request: EnqueueRequest, now: float) -> float:
    if request.delay is not None and request.run_at is not None:
        raise JobConfigError("invalid_option", "Pass delay or run_at, not both.")
    if request.run_at is not None:
        return due_time(request.run_at, now)
    if request.delay is None:
        return now
    return now + duration(request.delay, "delay", DELAY, code="invalid_option")


def _option_int(value: int | None, default: int) -> int:
    if value is None:
        return default
    return integer(value, "max_attempts", minimum=1, code="invalid_option")


def _option_seconds(value: Any, default: float, what: str, span: Span) -> float:
    return default if value is None else duration(value, what, span, code="invalid_option")


def prepare_many(
    config: QueueConfig, requests: Iterable[EnqueueRequest], now: float
) -> list[Prepared]:
    """Validate every request before any is written."""
    prepared = []
    for index, request in enumerate(requests):
        if not isinstance(request, EnqueueRequest):
            raise JobConfigError(
                "invalid_option",
                f"enqueue_many() item {index} is a {type(request).__name__}; "
                "pass EnqueueRequest values",
            )
        prepared.append(prepare(config, request, now))
    return prepared


def list_filter(
    *,
    queue: str | None,
    status: JobStatus | str | Iterable[JobStatus | str] | None,
    name: str | None,
    tenant: str | None,
    limit: int,
) -> tuple[JobFilter, int]:
    """Validate ``list()`` arguments into a filter and a page size."""
    return (
        JobFilter(
            queue=None if queue is None else check_queue_name(queue),
            statuses=_statuses(status),
            name=None if name is None else check_job_name(name),
            tenant=None if tenant is None else check_tenant(tenant),
        ),
        page_limit(limit),
    )


def _statuses(
    status: JobStatus | str | Iterable[JobStatus | str] | None,
) -> frozenset[JobStatus] | None:
    if status is None:
        return None
    items = [status] if isinstance(status, str) else list(status)
    try:
        return frozenset(JobStatus(item) for item in items)
    except ValueError:
        allowed = ", ".join(s.value for s in JobStatus)
        raise JobConfigError(
            "invalid_option", f"Invalid status filter {status!r}: allowed statuses are {allowed}"
        ) from None
