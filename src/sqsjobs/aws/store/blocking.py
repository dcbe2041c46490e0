"""The blocking face of an ``SqsJobStore`` (its ``sync`` attribute): boto3 only.

``SyncJobQueue``, the CLI and scripts use it. It drives the very flows the async face
drives (``operations``), through ``drive`` and the boto3 transport, over the same
``StoreState``, and never imports aiobotocore or aiohttp.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...core.models import Job
from . import operations
from .presence import SyncPresenceCalls
from .state import StoreState

if TYPE_CHECKING:
    from ...core.batches import BatchStatus
    from ...core.reports import DeadLetter, QueueStats, ReconcileReport, RedriveReport
    from ...core.requests import EnqueueResult, JobFilter, JobPage
    from ..flows.record_formats import RecordFormats, Scanned
    from ..flows.redrive import Progress


class SqsSyncView(SyncPresenceCalls):
    """``SyncJobStore`` over boto3, plus the operator calls (reconcile, retry, dead letters,
    redrive, stats) for the CLI and scripts."""

    def __init__(self, state: StoreState) -> None:
        self._state = state

    def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        return self._state.run_sync(operations.put_job(self._state, job, fingerprint))

    def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        return self._state.run_sync(operations.put_jobs(self._state, items))

    def get(self, job_id: str, now: float) -> Job | None:
        return self._state.run_sync(operations.get_job(self._state, job_id, now))

    def put_batch(
        self, batch_id: str, jobs: Sequence[Job], callbacks: Sequence[Job], now: float
    ) -> None:
        self._state.run_sync(operations.put_batch(self._state, batch_id, jobs, callbacks))

    def batch_status(self, batch_id: str, now: float) -> BatchStatus | None:
        return self._state.run_sync(operations.batch_status(self._state, batch_id, now))

    def pause(self, queue: str, now: float) -> None:
        paused = self._state.run_sync(operations.pause_queue(self._state, queue, now))
        self._state.pauses.learn(paused)

    def resume(self, queue: str, now: float) -> None:
        self._state.pauses.learn(self._state.run_sync(operations.resume_queue(self._state, queue)))

    def paused(self, now: float) -> Mapping[str, float]:
        found = self._state.run_sync(operations.paused_queues(self._state))
        self._state.pauses.learn(found)
        return found

    def put_in_transaction(
        self, jobs: Sequence[tuple[Job, str | None]], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]:
        return self._state.run_sync(operations.put_in_transaction(self._state, jobs, items))

    def cancel(self, job_id: str, now: float, *, by: str | None = None) -> bool:
        return self._state.run_sync(operations.cancel_job(self._state, job_id, now, by))

    def reconcile(
        self, *, grace: float = 900.0, queues: Sequence[str] | None = None
    ) -> ReconcileReport:
        """Blocking twin of ``SqsJobStore.reconcile``."""
        return self._state.run_sync(operations.reconcile(self._state, grace, queues))

    def retry(self, job_id: str, now: float, *, by: str | None = None) -> bool:
        """Blocking twin of ``SqsJobStore.retry``."""
        return self._state.run_sync(operations.retry(self._state, job_id, now, by))

    def dead_letters(
        self, queue: str | None = None, *, limit: int = 100, name: str | None = None
    ) -> list[DeadLetter]:
        """Blocking twin of ``SqsJobStore.dead_letters``."""
        return self._state.run_sync(operations.dead_letters(self._state, queue, limit, name))

    def redrive(
        self,
        queue: str | None = None,
        *,
        limit: int | None = None,
        on_progress: Progress | None = None,
        name: str | None = None,
        by: str | None = None,
    ) -> RedriveReport:
        """Blocking twin of ``SqsJobStore.redrive``."""
        return self._state.run_sync(
            operations.redrive(self._state, queue, limit, on_progress, name, by)
        )

    def dead_letter_depths(self, queues: Sequence[str] | None = None) -> dict[str, int]:
        """Blocking twin of ``SqsJobStore.dead_letter_depths``."""
        return self._state.run_sync(operations.dead_letter_depths(self._state, queues))

    def stats(self, queues: Sequence[str] | None = None) -> list[QueueStats]:
        """Blocking twin of ``SqsJobStore.stats``."""
        return self._state.run_sync(operations.stats(self._state, queues))

    def record_formats(self, *, on_page: Scanned | None = None) -> RecordFormats:
        """Blocking twin of ``SqsJobStore.record_formats``."""
        return self._state.run_sync(operations.record_formats(self._state, on_page))

    def describe(self, queue: str) -> None:
        """Learn ``queue``'s redrive policy (its DLQ) and retention, once."""
        self._state.run_sync(self._state.described([queue]))

    # Last, so that ``list`` in the annotations above is the builtin, not this method.
    def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        return self._state.run_sync(operations.list_jobs(self._state, filter, limit, cursor, now))
