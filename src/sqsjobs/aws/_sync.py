"""The blocking face of an ``SqsJobStore`` (its ``sync`` attribute): boto3 only.

``SyncJobQueue``, the CLI and scripts use it. It drives the very flows the async face
drives, through ``drive`` and the boto3 transport, and never imports aioboto3 or aiohttp.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._models import EnqueueResult, Job, JobFilter, JobPage
from . import _flows
from ._layout import describe_queue
from ._listing import list_jobs
from ._reconcile import ReconcileReport, reconcile

if TYPE_CHECKING:
    from ._store import SqsJobStore


class SqsSyncView:
    """``SyncJobStore`` over boto3, plus the reconciler for the CLI's periodic pass."""

    def __init__(self, store: SqsJobStore) -> None:
        self._store = store

    def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        store = self._store
        return store._run_sync(_flows.put(store._layout, job, fingerprint, store._clock()))

    def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        store = self._store
        return store._run_sync(_flows.put_many(store._layout, items, store._clock()))

    def get(self, job_id: str, now: float) -> Job | None:
        return self._store._run_sync(_flows.get(self._store._layout, job_id, now))

    def cancel(self, job_id: str, now: float) -> bool:
        return self._store._run_sync(_flows.cancel(self._store._layout, job_id, now))

    def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        flow = list_jobs(self._store._layout, filter, limit, cursor, now)
        return self._store._run_sync(flow)

    def reconcile(
        self, *, grace: float = 900.0, queues: Sequence[str] | None = None
    ) -> ReconcileReport:
        """Blocking twin of ``SqsJobStore.reconcile``."""
        store = self._store
        names = list(queues) if queues is not None else sorted(store._layout.queue_urls)
        for queue in names:
            self.describe(queue)
        return store._run_sync(reconcile(store._layout, names, store._clock(), grace))

    def describe(self, queue: str) -> None:
        """Learn ``queue``'s redrive policy and retention, once."""
        store = self._store
        if queue not in store._layout.described:
            url = store._layout.url(queue)
            flow = describe_queue(url, store._layout.dead_letter_urls.get(queue))
            store._layout = store._layout.with_info(queue, store._run_sync(flow))
