"""sqsjobs: durable background jobs for Python on AWS.

Producers enqueue named JSON jobs through ``JobQueue`` (async) or ``SyncJobQueue``
(blocking); ``JobWorker`` claims and runs them with bounded retries and a dead-letter
status. ``MemoryJobStore`` keeps jobs in process; ``sqsjobs.aws.SqsJobStore`` keeps them
in SQS and DynamoDB. This package root imports neither the AWS store nor the CLI.
"""

from ._backoff import Backoff, compute_backoff
from ._cron import Cron
from ._errors import (
    JobBatchError,
    JobConfigError,
    JobFatalError,
    JobIdempotencyConflictError,
    JobTimeoutError,
)
from ._handlers import Handler, JobContext, JobRegistry
from ._idempotency import job_idempotency_key
from ._memory import MemoryJobStore
from ._models import EnqueueRequest, EnqueueResult, Job, JobFilter, JobPage, JobStatus
from ._queue import JobQueue, SyncJobQueue
from ._store import JobStore, SyncJobStore
from ._worker import JobWorker, WorkerState

__all__ = [
    "Backoff",
    "Cron",
    "EnqueueRequest",
    "EnqueueResult",
    "Handler",
    "Job",
    "JobBatchError",
    "JobConfigError",
    "JobContext",
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
    "SyncJobQueue",
    "SyncJobStore",
    "WorkerState",
    "compute_backoff",
    "job_idempotency_key",
]
