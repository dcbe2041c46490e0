"""sqsjobs: durable background jobs for Python on AWS.

Producers enqueue named JSON jobs through ``JobQueue`` (async) or ``SyncJobQueue``
(blocking); ``JobWorker`` claims and runs them with bounded retries and a dead-letter
status. ``MemoryJobStore`` keeps jobs in process; ``sqsjobs.aws.SqsJobStore`` keeps them
in SQS and DynamoDB. This package root imports neither the AWS store nor the CLI.

Only the errors (plain exceptions) load with the package; every other name loads on
first use (PEP 562). A Lambda function importing ``sqsjobs.aws.lambda_`` pays for neither
the worker loop, the cron parser, the memory store nor the producer's request values, and
``sqsjobs --version`` or ``--help`` (which import this package first) pay for no pydantic:
``Job`` and ``Backoff`` load it, and it takes longer to import than the rest of them.
The base install (``pip install sqsjobs``) serves producers and Lambda; ``JobWorker``
needs the ``worker`` extra and ``Cron`` its cron parser (the ``cron`` extra alone is
enough), and without it importing them raises an ``ImportError`` that says what to
install.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .core.errors import (
    JobBatchError,
    JobConfigError,
    JobError,
    JobFatalError,
    JobIdempotencyConflictError,
    JobStoreError,
    JobStoreThrottledError,
    JobTimeoutError,
    JobTransactionError,
)

# The release: the one place it is written (pyproject.toml reads it from here). Bump it
# with every release and say in CHANGELOG.md what changed and how to upgrade; a change
# to what is stored or sent also says which releases can read it.
__version__ = "0.2.0"

if TYPE_CHECKING:
    from .core.backoff import Backoff, compute_backoff
    from .core.batches import Batch, BatchStatus
    from .core.history import HistoryEntry
    from .core.idempotency import job_idempotency_key
    from .core.models import Job, JobStatus
    from .core.requests import EnqueueRequest, EnqueueResult, JobFilter, JobPage
    from .core.store import JobStore, SyncJobStore
    from .cron.schedule import Cron
    from .handlers.context import JobContext
    from .handlers.registry import Handler, JobRegistry
    from .memory.store import MemoryJobStore
    from .observe.emf import EmfMetrics
    from .observe.metrics import Metrics
    from .observe.prometheus import PrometheusMetrics
    from .producer.queue import JobQueue, SyncJobQueue
    from .producer.tenant import SyncTenantJobQueue, TenantJobQueue
    from .worker.job_worker import JobWorker, WorkerState

_LAZY = {
    "Backoff": ".core.backoff",
    "compute_backoff": ".core.backoff",
    "HistoryEntry": ".core.history",
    "Job": ".core.models",
    "JobStatus": ".core.models",
    "Cron": ".cron.schedule",
    "Handler": ".handlers.registry",
    "JobContext": ".handlers.context",
    "JobRegistry": ".handlers.registry",
    "job_idempotency_key": ".core.idempotency",
    "MemoryJobStore": ".memory.store",
    "Metrics": ".observe.metrics",
    "EmfMetrics": ".observe.emf",
    "PrometheusMetrics": ".observe.prometheus",
    "JobQueue": ".producer.queue",
    "SyncJobQueue": ".producer.queue",
    "EnqueueRequest": ".core.requests",
    "EnqueueResult": ".core.requests",
    "Batch": ".core.batches",
    "BatchStatus": ".core.batches",
    "JobFilter": ".core.requests",
    "JobPage": ".core.requests",
    "JobStore": ".core.store",
    "SyncJobStore": ".core.store",
    "SyncTenantJobQueue": ".producer.tenant",
    "TenantJobQueue": ".producer.tenant",
    "JobWorker": ".worker.job_worker",
    "WorkerState": ".worker.job_worker",
}


# Packages of the ``worker`` extra that a lazily loaded name imports (the cron parser,
# which ``JobWorker`` loads for its ``cron=``); the base install has none of them.
_WORKER_EXTRA = frozenset({"croniter"})


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sqsjobs' has no attribute {name!r}")
    try:
        loaded = importlib.import_module(module, __name__)
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] not in _WORKER_EXTRA:
            raise
        extra = "cron" if name == "Cron" else "worker"  # a Lambda cron function needs no more
        raise ImportError(
            f"sqsjobs.{name} needs the {extra} extra ({missing.name} is not installed): "
            f"pip install 'sqsjobs[{extra}]'",
            name=missing.name,
        ) from missing
    value = getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Backoff",
    "Batch",
    "BatchStatus",
    "Cron",
    "EmfMetrics",
    "EnqueueRequest",
    "EnqueueResult",
    "Handler",
    "HistoryEntry",
    "Job",
    "JobBatchError",
    "JobConfigError",
    "JobContext",
    "JobError",
    "JobFatalError",
    "JobFilter",
    "JobIdempotencyConflictError",
    "JobPage",
    "JobQueue",
    "JobRegistry",
    "JobStatus",
    "JobStore",
    "JobStoreError",
    "JobStoreThrottledError",
    "JobTimeoutError",
    "JobTransactionError",
    "JobWorker",
    "MemoryJobStore",
    "Metrics",
    "PrometheusMetrics",
    "SyncJobQueue",
    "SyncJobStore",
    "SyncTenantJobQueue",
    "TenantJobQueue",
    "WorkerState",
    "compute_backoff",
    "job_idempotency_key",
]
