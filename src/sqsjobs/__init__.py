"""sqsjobs: durable background jobs for Python on AWS.

Producers enqueue named JSON jobs through ``JobQueue`` (async) or ``SyncJobQueue``
(blocking); ``JobWorker`` claims and runs them with bounded retries and a dead-letter
status. ``MemoryJobStore`` keeps jobs in process; ``sqsjobs.aws.SqsJobStore`` keeps them
in SQS and DynamoDB. This package root imports neither the AWS store nor the CLI.

Jobs, their statuses, backoff and errors load with the package; the rest loads on first
use (PEP 562), so a Lambda function importing ``sqsjobs.aws.lambda_`` pays for neither
the worker loop, the cron parser, the memory store nor the producer's request values.
The base install (``pip install sqsjobs``) serves producers and Lambda; ``JobWorker``
needs the ``worker`` extra and ``Cron`` its cron parser (the ``cron`` extra alone is
enough), and without it importing them raises an ``ImportError`` that says what to
install.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._backoff import Backoff, compute_backoff
from ._errors import (
    JobBatchError,
    JobConfigError,
    JobError,
    JobFatalError,
    JobIdempotencyConflictError,
    JobTimeoutError,
)
from ._models import Job, JobStatus
from ._version import __version__ as __version__

if TYPE_CHECKING:
    from ._cron import Cron
    from ._handlers import Handler, JobContext, JobRegistry
    from ._idempotency import job_idempotency_key
    from ._memory import MemoryJobStore
    from ._metrics import Metrics
    from ._metrics_emf import EmfMetrics
    from ._metrics_prometheus import PrometheusMetrics
    from ._queue import JobQueue, SyncJobQueue
    from ._requests import EnqueueRequest, EnqueueResult, JobFilter, JobPage
    from ._store import JobStore, SyncJobStore
    from ._tenant import SyncTenantJobQueue, TenantJobQueue
    from ._worker import JobWorker, WorkerState

_LAZY = {
    "Cron": "._cron",
    "Handler": "._handlers",
    "JobContext": "._handlers",
    "JobRegistry": "._handlers",
    "job_idempotency_key": "._idempotency",
    "MemoryJobStore": "._memory",
    "Metrics": "._metrics",
    "EmfMetrics": "._metrics_emf",
    "PrometheusMetrics": "._metrics_prometheus",
    "JobQueue": "._queue",
    "SyncJobQueue": "._queue",
    "EnqueueRequest": "._requests",
    "EnqueueResult": "._requests",
    "JobFilter": "._requests",
    "JobPage": "._requests",
    "JobStore": "._store",
    "SyncJobStore": "._store",
    "SyncTenantJobQueue": "._tenant",
    "TenantJobQueue": "._tenant",
    "JobWorker": "._worker",
    "WorkerState": "._worker",
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
    "Cron",
    "EmfMetrics",
    "EnqueueRequest",
    "EnqueueResult",
    "Handler",
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
    "JobTimeoutError",
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
