"""The store SPI: what a backend implements so queues, workers and the dashboard can use it.

``JobStore`` is the async contract the worker and ``JobQueue`` speak. ``SyncJobStore`` is
the producer subset, blocking, for ``SyncJobQueue``; a store offers it as its ``sync``
attribute (``MemoryJobStore`` and ``SqsJobStore`` do). A custom store that only has the
async face still works with ``SyncJobQueue``: each call then runs on a private event loop.
``LimitStore`` is the refinement a store adds so handlers may declare limits; ``release``
with ``run_at`` returns a job that may not start yet (a limit, a tenant's cap) as
``delayed`` until then, its attempt not counted.

The other protocols are capabilities, which not every store has. Every protocol is in
this module because something in sqsjobs looks for it on whatever store it was given,
by ``isinstance`` (all are runtime-checkable; ``SyncJobStore`` is looked for as the
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
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from .capabilities import (  # re-exported: importers find every protocol here
    BatchStore as BatchStore,
)
from .capabilities import (
    PauseStore as PauseStore,
)
from .capabilities import (
    SyncBatchStore as SyncBatchStore,
)
from .capabilities import (
    SyncPauseStore as SyncPauseStore,
)
from .capabilities import (
    SyncTransactionStore as SyncTransactionStore,
)
from .capabilities import (
    TransactionStore as TransactionStore,
)
from .capabilities import (
    batch_store as batch_store,
)
from .capabilities import (
    pause_store as pause_store,
)
from .capabilities import (
    sync_batch_store as sync_batch_store,
)
from .capabilities import (
    sync_pause_store as sync_pause_store,
)
from .capabilities import (
    sync_transaction_store as sync_transaction_store,
)
from .capabilities import (
    transaction_store as transaction_store,
)
from .history import acting
from .models import Job

if TYPE_CHECKING:
    from .presence import WorkerPresence
    from .reports import QueueStats, RedriveProgress, RedriveReport
    from .requests import EnqueueResult, JobFilter, JobPage


@runtime_checkable
class JobStore(Protocol):
    async def put(self, job: Job, fingerprint: str | None) -> EnqueueResult: ...

    async def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]: ...

    async def claim(
        self, queue: str, worker_id: str, now: float, *, limit: int = 1, wait: float = 0.0
    ) -> list[Job]: ...

    async def heartbeat(
        self, job_id: str, lease_token: str, lease_until: float, now: float
    ) -> bool: ...

    async def complete(self, job_id: str, lease_token: str, now: float, result: Any) -> bool: ...

    async def fail(
        self, job_id: str, lease_token: str, error: str, retry_at: float | None, now: float
    ) -> bool: ...

    async def release(
        self, job_id: str, lease_token: str, error: str, now: float, *, run_at: float | None = None
    ) -> bool: ...

    async def cancel(self, job_id: str, now: float) -> bool: ...

    async def get(self, job_id: str, now: float) -> Job | None: ...

    async def list(
        self, filter: JobFilter, limit: int, cursor: str | None, now: float
    ) -> JobPage: ...


class SlotTaken(NamedTuple):
    """What an attempt to take a limit's slot found: the slot taken, or when one frees."""

    slot: int | None  # the slot now held, None when every slot tried was held
    free_at: float | None  # when the earliest held slot's lease ends (None if one was taken)


@runtime_checkable
class LimitStore(Protocol):
    """The slots that enforce handler limits (``sqsjobs.handlers.limits``) for every process alike.

    A limit key has numbered slots; each is free when nobody holds it or its holder's
    ``until`` has passed. ``take_slot`` tries the slots in ``order`` and holds the first
    free one for ``holder`` until ``until``; ``extend_slot`` and ``free_slot`` act only
    for the holder. Slots are not jobs: no listing, count or reconciler ever sees them.
    """

    async def take_slot(
        self, key: str, order: Sequence[int], holder: str, until: float, now: float
    ) -> SlotTaken: ...

    async def extend_slot(
        self, key: str, slot: int, holder: str, until: float, now: float
    ) -> bool: ...

    async def free_slot(self, key: str, slot: int, holder: str, now: float) -> bool: ...


@runtime_checkable
class CancelledClaimsStore(Protocol):
    """A store whose claims can outlive their caller: SQS runs a cancelled long poll on
    until its wait ends. A stopping worker waits for what those polls bring to be handed
    back (``worker.drain``); a store that waits in-process has nothing to wait for."""

    async def wait_cancelled_claims(self) -> None: ...


@runtime_checkable
class SteppedDelayStore(Protocol):
    """A store whose delays come in steps: SQS hides a message for whole seconds, so a
    retry asked for 0.02 s comes back a second later. What the worker logs is this."""

    def effective_delay(self, delay: float) -> float: ...


def effective_delay(store: object, delay: float) -> float:
    """``delay`` as ``store`` carries it out (``SteppedDelayStore``), else as asked."""
    return store.effective_delay(delay) if isinstance(store, SteppedDelayStore) else delay


@runtime_checkable
class RetryStore(Protocol):
    """Run a dead job again, attempts reset; False if unknown, expired or not dead."""

    async def retry(self, job_id: str, now: float) -> bool: ...


@runtime_checkable
class RedriveStore(Protocol):
    """Send dead jobs back to their queues: up to ``limit`` (all if None), of ``queue``
    (every queue if None), of job ``name`` only if given."""

    async def redrive(
        self,
        queue: str | None = None,
        *,
        limit: int | None = None,
        on_progress: RedriveProgress | None = None,
        name: str | None = None,
    ) -> RedriveReport: ...


@runtime_checkable
class StatsStore(Protocol):
    """Per queue: its jobs by status and its message depths."""

    async def stats(self, queues: Sequence[str] | None = None) -> list[QueueStats]: ...


@runtime_checkable
class DepthStore(Protocol):
    """How many messages wait in each queue's dead-letter queue, from the queues alone:
    a read that costs one request per queue, whatever the store keeps."""

    async def dead_letter_depths(self, queues: Sequence[str] | None = None) -> dict[str, int]: ...


@runtime_checkable
class RoutedStore(Protocol):
    """A store configured with named queues (their URLs), known without a request."""

    @property
    def queue_urls(self) -> Mapping[str, str]: ...


@runtime_checkable
class PresenceStore(Protocol):
    """Which workers are alive (``core.presence``): each writes its own record, readers
    list the records that have not run out by ``now``. Writes never raise for a record
    that is gone: ending one that already ran out changes nothing."""

    async def put_presence(self, presence: WorkerPresence) -> None: ...

    async def end_presence(self, worker_id: str, now: float) -> None: ...

    async def presences(self, now: float) -> list[WorkerPresence]: ...


@runtime_checkable
class SyncJobStore(Protocol):
    def put(self, job: Job, fingerprint: str | None) -> EnqueueResult: ...

    def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]: ...

    def get(self, job_id: str, now: float) -> Job | None: ...

    def cancel(self, job_id: str, now: float) -> bool: ...

    def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage: ...


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
