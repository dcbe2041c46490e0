"""The store SPI, for whoever writes a job store of their own.

Implement ``JobStore`` (put, put_many, claim, heartbeat, complete, fail, release, cancel,
get, list) and ``JobQueue``, ``SyncJobQueue``, ``JobWorker`` and the dashboard work over
your store. What each call must do (fencing on the lease token, lease expiry at the next
claim, ``list``'s order and cursors) is what the conformance suite in sqsjobs' repository
(``tests/conformance/``) checks of the two shipped stores; run it on yours. Then each
protocol below that your store also satisfies unlocks what it names. Nothing is
registered: sqsjobs finds each by ``isinstance`` (they are runtime-checkable), so having
the calls with these signatures is all it takes.

- ``SyncJobStore``, as your store's ``sync`` attribute: ``SyncJobQueue`` calls it
  directly, where otherwise it runs each call on an event loop of its own.
- ``LimitStore`` (returning ``SlotTaken``): handlers may declare limits
  (``concurrency=``, ``rate=``); without it, ``JobWorker`` refuses a registry with them.
- ``CancelledClaimsStore``: a stopping worker waits for claims that outlive their
  caller (a long poll still running) to be handed back.
- ``SteppedDelayStore``: a retry's log line says the delay your store really applies.
- ``PresenceStore`` (``WorkerPresence`` records): workers and Lambda handlers say they
  are alive, and the dashboard shows who serves each queue.
- ``RetryStore``: the dashboard's Retry button on a dead job.
- ``RedriveStore`` (``RedriveReport``, ``RedriveProgress``): the dashboard's Redrive.
- ``StatsStore`` (``QueueStats``): the dashboard's counts come from ``stats`` instead of
  from reading every record.
- ``DepthStore``: the dashboard's dead-letter page reads DLQ depths alone.
- ``RoutedStore``: the dashboard lists your configured queues, not only those it has
  seen a record in.
- ``BatchStore`` (and ``SyncBatchStore`` as ``sync``; ``BatchStatus``): ``queue.batch``
  and a callback's ``ctx.batch``; without it, ``batch`` is refused.
- ``PauseStore`` (and ``SyncPauseStore`` as ``sync``): ``queue.pause``, ``resume`` and
  ``paused``; a paused queue's claims find nothing. Without it, those calls are refused.
- ``TransactionStore`` (and ``SyncTransactionStore`` as ``sync``):
  ``queue.enqueue_in_transaction``, jobs committed with the application's own writes;
  without it, that call is refused.

``cancel``, ``retry`` and ``redrive`` may also take a keyword ``by`` (who acted, for a
job's history): the dashboard passes it when the method accepts it.

The command line is not among the users: it is a tool for ``sqsjobs.aws.SqsJobStore``,
which it opens from a stack or the ``SQSJOBS_*`` environment. ``sqsjobs.core.store``
defines these names (``JobStore`` and ``SyncJobStore`` are in ``sqsjobs`` too); its
docstring says which shipped store has each.
"""

from __future__ import annotations

from .core.batches import BatchStatus
from .core.presence import WorkerPresence
from .core.reports import QueueStats, RedriveProgress, RedriveReport
from .core.store import (
    BatchStore,
    CancelledClaimsStore,
    DepthStore,
    JobStore,
    LimitStore,
    PauseStore,
    PresenceStore,
    RedriveStore,
    RetryStore,
    RoutedStore,
    SlotTaken,
    StatsStore,
    SteppedDelayStore,
    SyncBatchStore,
    SyncJobStore,
    SyncPauseStore,
    SyncTransactionStore,
    TransactionStore,
)

__all__ = [
    "BatchStatus",
    "BatchStore",
    "CancelledClaimsStore",
    "DepthStore",
    "JobStore",
    "LimitStore",
    "PauseStore",
    "PresenceStore",
    "QueueStats",
    "RedriveProgress",
    "RedriveReport",
    "RedriveStore",
    "RetryStore",
    "RoutedStore",
    "SlotTaken",
    "StatsStore",
    "SteppedDelayStore",
    "SyncBatchStore",
    "SyncJobStore",
    "SyncPauseStore",
    "SyncTransactionStore",
    "TransactionStore",
    "WorkerPresence",
]
