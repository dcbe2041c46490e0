"""The blocking face of an ``SqsJobStore`` (its ``sync`` attribute): boto3 only.

``SyncJobQueue``, the CLI and scripts use it. It drives the very flows the async face
drives, through ``drive`` and the boto3 transport, and never imports aioboto3 or aiohttp.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._models import EnqueueResult, Job, JobFilter, JobPage
from . import _flows
from ._layout import Layout, describe_queue

if TYPE_CHECKING:
    from ._dead_letters import DeadLetter
    from ._operations import Progress, RedriveReport
    from ._reconcile import ReconcileReport
    from ._stats import QueueStats
    from ._store import SqsJobStore


class SqsSyncView:
    """``SyncJobStore`` over boto3, plus the operator calls (reconcile, retry, dead letters,
    redrive, stats) for the CLI and scripts."""

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

    def reconcile(
        self, *, grace: float = 900.0, queues: Sequence[str] | None = None
    ) -> ReconcileReport:
        """Blocking twin of ``SqsJobStore.reconcile``."""
        from ._reconcile import reconcile  # operator calls load on first use, as there

        layout, names = self._all_described(queues)
        return self._store._run_sync(reconcile(layout, names, self._store._clock(), grace))

    def retry(self, job_id: str, now: float) -> bool:
        """Blocking twin of ``SqsJobStore.retry``."""
        from ._operations import retry

        layout, _ = self._all_described(None)
        return self._store._run_sync(retry(layout, job_id, now))

    def dead_letters(self, queue: str | None = None, *, limit: int = 100) -> list[DeadLetter]:
        """Blocking twin of ``SqsJobStore.dead_letters``."""
        from ._dead_letters import dead_letters

        layout, names = self._all_described(None if queue is None else [queue])
        return self._store._run_sync(dead_letters(layout, names, self._store._clock(), limit))

    def redrive(
        self, queue: str | None = None, *, limit: int | None = None,
        on_progress: Progress | None = None,
    ) -> RedriveReport:  # fmt: skip
        """Blocking twin of ``SqsJobStore.redrive``."""
        from ._operations import redrive

        layout, names = self._all_described(None if queue is None else [queue])
        flow = redrive(layout, names, self._store._clock(), limit, on_progress)
        return self._store._run_sync(flow)

    def stats(self, queues: Sequence[str] | None = None) -> list[QueueStats]:
        """Blocking twin of ``SqsJobStore.stats``."""
        from ._stats import stats

        layout, names = self._all_described(queues)
        return self._store._run_sync(stats(layout, names, self._store._clock()))

    def describe(self, queue: str) -> None:
        """Learn ``queue``'s redrive policy and retention, once."""
        store = self._store
        if queue not in store._layout.described:
            url = store._layout.url(queue)
            flow = describe_queue(queue, url, store._layout.dead_letter_urls.get(queue))
            store._layout = store._layout.with_info(queue, store._run_sync(flow))

    def _all_described(self, queues: Sequence[str] | None) -> tuple[Layout, list[str]]:
        names = list(queues) if queues is not None else sorted(self._store._layout.queue_urls)
        for queue in names:
            self.describe(queue)
        return self._store._layout, names

    # Last, so that ``list`` in the annotations above is the builtin, not this method.
    def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        from ._listing import list_jobs

        flow = list_jobs(self._store._layout, filter, limit, cursor, now)
        return self._store._run_sync(flow)
