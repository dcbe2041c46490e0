"""The store SPI: what a backend implements so queues, workers and the dashboard can use it.

``JobStore`` is the async contract the worker and ``JobQueue`` speak. ``SyncJobStore`` is
the producer subset, blocking, for ``SyncJobQueue``; a store offers it as its ``sync``
attribute (``MemoryJobStore`` and ``SqsJobStore`` do). A custom store that only has the
async face still works with ``SyncJobQueue``: each call then runs on a private event loop.
``LimitStore`` is the refinement a store adds so handlers may declare limits; ``release``
with ``run_at`` returns a job that may not start yet (a limit, a tenant's cap) as
``delayed`` until then, its attempt not counted.

The other protocols are capabilities, which not every store has (declared in
``capabilities`` and ``fleet_capabilities``). Every protocol is importable from this
module because something in sqsjobs looks for it on whatever store it was given, by
``isinstance`` (all are runtime-checkable; ``SyncJobStore`` is looked for as the
store's ``sync``), and does without it where the store lacks it, as the last column says:

    protocol              memory      sqs         who looks for it (and without it)
    JobStore              yes         yes         JobQueue, JobWorker, the Lambda handler;
                                                  make_dashboard (refused)
    SyncJobStore          yes (sync)  yes (sync)  SyncJobQueue, on ``sync`` (a loop per call)
    LimitStore            yes         yes         the run of a limited handler (refused)
    CancelledClaimsStore  no          yes         a stopping worker (nothing to wait for)
    SteppedDelayStore     no          yes         a retry's log line (the delay as asked)
    RetryStore            yes         yes         the dashboard's Retry (no button)
    RedriveStore          yes (dead)  yes (DLQs)  the dashboard's Redrive (redrives none)
    StatsStore            no          yes         the dashboard's counts (read from records)
    DepthStore            no          yes         the dashboard's DLQ depths (from stats)
    RoutedStore           no          yes         the dashboard's queues (those in records)
    PresenceStore         yes         yes         the worker and the Lambda handler write it
                                                  (not kept), the dashboard reads it
    BatchStore            yes         yes         JobQueue.batch, a callback's ctx.batch
                                                  (refused: JobConfigError)
    SyncBatchStore        yes (sync)  yes (sync)  SyncJobQueue.batch, on ``sync`` (refused)
    TransactionStore      no          yes         JobQueue.enqueue_in_transaction (refused)
    PauseStore            yes         yes         JobQueue.pause/resume/paused, the
                                                  dashboard's Pause button (refused; none)
    SyncPauseStore        yes (sync)  yes (sync)  SyncJobQueue.pause/resume/paused (refused)
    SyncTransactionStore  no          yes (sync)  SyncJobQueue.enqueue_in_transaction, on
                                                  ``sync`` (refused)

So their users are the producers, the worker, the Lambda handler and the dashboard, and
whoever writes a store implements them: ``sqsjobs.store`` re-exports them for store
authors, and the package's own modules import them from here. The conformance suite
runs each call on every store that has it, through both faces (``tests/conformance/``),
and ``tests/test_public_store_api.py`` checks this table against both stores.

The command line is an ``SqsJobStore`` tool, not a user of these protocols: it opens its
store from a stack or the ``SQSJOBS_*`` environment, which only ``SqsJobStore`` has
(``cli/_config.py``), and calls that class and its ``sync`` face directly, as
``make_reconcile_handler`` does. So there is no protocol for what only they call
(``dead_letters``, ``reconcile``, the operator calls on ``sync``); the conformance suite
keeps its own (``tests/conformance/capabilities.py``) to check the stores have them.

Times are epoch seconds from the caller's clock; the store never reads a clock of its
own for decisions a caller passed ``now`` for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

# Re-exported: importers find every protocol here.
from .capabilities import BatchStore as BatchStore
from .capabilities import PauseStore as PauseStore
from .capabilities import SyncBatchStore as SyncBatchStore
from .capabilities import SyncPauseStore as SyncPauseStore
from .capabilities import SyncTransactionStore as SyncTransactionStore
from .capabilities import TransactionStore as TransactionStore
from .capabilities import batch_store as batch_store
from .capabilities import pause_store as pause_store
from .capabilities import sync_batch_store as sync_batch_store
from .capabilities import sync_pause_store as sync_pause_store
from .capabilities import sync_transaction_store as sync_transaction_store
from .capabilities import transaction_store as transaction_store
from .fleet_capabilities import CancelledClaimsStore as CancelledClaimsStore
from .fleet_capabilities import DepthStore as DepthStore
from .fleet_capabilities import LimitStore as LimitStore
from .fleet_capabilities import PresenceStore as PresenceStore
from .fleet_capabilities import RedriveStore as RedriveStore
from .fleet_capabilities import RetryStore as RetryStore
from .fleet_capabilities import RoutedStore as RoutedStore
from .fleet_capabilities import SlotTaken as SlotTaken
from .fleet_capabilities import StatsStore as StatsStore
from .fleet_capabilities import SteppedDelayStore as SteppedDelayStore
from .fleet_capabilities import effective_delay as effective_delay
from .history import acting
from .models import Job

if TYPE_CHECKING:
    from .requests import EnqueueResult, JobFilter, JobPage


@runtime_checkable
class JobStore(Protocol):
    """The async contract every store keeps: the producer's writes and reads, a worker's
    claims and the writes after a claim (fenced by its lease token).

    A write after a claim returns False, and changes nothing, when ``lease_token`` no
    longer holds the job (its lease ran out and another claim took it, or it was
    cancelled): the caller has lost the job and records nothing more of it. A backend
    that fails raises ``JobStoreError`` (``JobStoreThrottledError`` when throttled).
    """

    async def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        """Write a new job, or find the one its idempotency key already holds.

        Args:
            job: The job as prepared by the producer, checked and complete.
            fingerprint: The request's fingerprint (``core.idempotency``) when the job
                has an idempotency key; a later put under the key must bring the same.

        Returns:
            The job written, or the live one holding the key (``duplicate=True``).

        Raises:
            JobIdempotencyConflictError: The key holds a job of another fingerprint.
            JobConfigError: The store refuses the job (a queue it lacks, ``store_full``).
        """

    async def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        """``put`` for each ``(job, fingerprint)``, in order; results in the same order.

        Raises:
            JobBatchError: A put failed; its ``results`` are those written before it, and
                its cause is the put's error.
        """

    async def claim(
        self, queue: str, worker_id: str, now: float, *, limit: int = 1, wait: float = 0.0
    ) -> list[Job]:
        """Take up to ``limit`` due jobs of ``queue`` to run, each under a new lease.

        Each job claimed is ``running``, its ``attempts`` counted, with a fresh
        ``lease_token`` and a lease of the job's ``lease`` seconds. A job whose lease ran
        out is claimable again (dead instead, if it was on its last attempt).

        Args:
            queue: The queue to claim from; a paused queue's claims find nothing.
            worker_id: Who claims, kept on each job (``locked_by``).
            now: The caller's time: what is due, and where the leases start.
            limit: The most jobs to take.
            wait: Seconds to wait for a job when none is due (a long poll; stores cap it).

        Returns:
            The jobs claimed, possibly none.
        """

    async def heartbeat(
        self, job_id: str, lease_token: str, lease_until: float, now: float
    ) -> bool:
        """Extend the lease of a running job to ``lease_until``; False if lost (see above)."""

    async def complete(self, job_id: str, lease_token: str, now: float, result: Any) -> bool:
        """Record the job completed with ``result`` (JSON, or None); False if lost."""

    async def fail(
        self, job_id: str, lease_token: str, error: str, retry_at: float | None, now: float
    ) -> bool:
        """Record a failed attempt with ``error`` (its ``last_error``); False if lost.

        The job runs again at ``retry_at`` (queued, or delayed until then), or is dead
        when ``retry_at`` is None or it has used its ``max_attempts``.
        """

    async def release(
        self, job_id: str, lease_token: str, error: str, now: float, *, run_at: float | None = None
    ) -> bool:
        """Give the job back without counting its attempt; False if lost.

        It is queued again at once, or delayed until ``run_at`` (a start that a limit or
        a tenant's cap deferred); ``error`` says why, in its ``last_error``.
        """

    async def cancel(self, job_id: str, now: float) -> bool:
        """Cancel a job that has not ended (a running one loses its lease); False for
        one that has ended or is unknown."""

    async def get(self, job_id: str, now: float) -> Job | None:
        """The job's record, or None for an unknown id or one past its retention."""

    async def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        """A page of at most ``limit`` jobs that ``filter`` selects, in ``(created_at, id)``
        order (reversed with ``newest_first``), from ``cursor`` (a page's ``next_cursor``;
        None: the first page)."""


@runtime_checkable
class SyncJobStore(Protocol):
    """The producer's subset of ``JobStore``, blocking: a store's ``sync`` attribute."""

    def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        """Blocking form of [`JobStore.put`][sqsjobs.JobStore.put]."""

    def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        """Blocking form of [`JobStore.put_many`][sqsjobs.JobStore.put_many]."""

    def get(self, job_id: str, now: float) -> Job | None:
        """Blocking form of [`JobStore.get`][sqsjobs.JobStore.get]."""

    def cancel(self, job_id: str, now: float) -> bool:
        """Blocking form of [`JobStore.cancel`][sqsjobs.JobStore.cancel]."""

    def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        """Blocking form of [`JobStore.list`][sqsjobs.JobStore.list]."""


class _BlockingFace:
    """``SyncJobStore`` over a store that only has the async face: one loop per call."""

    def __init__(self, store: JobStore) -> None:
        self._store = store

    def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        return asyncio.run(self._store.put(job, fingerprint))

    def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        return asyncio.run(self._store.put_many(items))

    def get(self, job_id: str, now: float) -> Job | None:
        return asyncio.run(self._store.get(job_id, now))

    def cancel(self, job_id: str, now: float, *, by: str | None = None) -> bool:
        return asyncio.run(acting(self._store.cancel, job_id, now, by=by))

    def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        return asyncio.run(self._store.list(filter, limit, cursor, now))


def sync_face(store: Any) -> SyncJobStore:
    """The blocking face of ``store``: its own ``sync`` view if it has one."""
    view = getattr(store, "sync", None)
    if view is not None:
        return view  # type: ignore[no-any-return]
    return _BlockingFace(store)


ClaimWatcher = Callable[[str, int], None]  # (queue, messages refused by one claim round)


def watch_claims(store: Any, worker_id: str, watcher: ClaimWatcher | None) -> None:
    """Have ``store`` tell ``watcher`` how many delivered messages ``worker_id``'s claims
    refused (``None`` stops it): the claim-refusal metric.

    Only a store that receives messages it may have to refuse has ``watch_claims``
    (``SqsJobStore``: duplicates, jobs not yet due, gone or malformed); the memory store
    claims only claimable records, so for it, and for custom stores, this does nothing.
    """
    watch = getattr(store, "watch_claims", None)
    if watch is not None:
        watch(worker_id, watcher)


# Declared here in 0.2; nothing in sqsjobs looks for them (``core.operator_calls``).
_MOVED = frozenset(
    {
        "DeadLetterStore",
        "ReconcileStore",
        "SyncRetryStore",
        "SyncRedriveStore",
        "SyncStatsStore",
        "SyncDepthStore",
        "SyncDeadLetterStore",
        "SyncReconcileStore",
        "SyncPresenceStore",
    }
)


def __getattr__(name: str) -> Any:
    """The protocols 0.2 declared here, still importable, with a ``DeprecationWarning``."""
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    from . import operator_calls

    warnings.warn(
        f"sqsjobs.core.store.{name} is deprecated: nothing in sqsjobs looks for it; "
        f"import it from sqsjobs.core.operator_calls, or check for SqsJobStore",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(operator_calls, name)
