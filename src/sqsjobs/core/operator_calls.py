"""The calls only ``SqsJobStore`` answers that nothing in sqsjobs looks for on a store.

``sqsjobs.store`` declares the capabilities that the worker, the Lambda handler and the
dashboard find on whatever store they are given. The protocols below are not among
them: only ``SqsJobStore`` has ``dead_letters`` and ``reconcile``, and what calls them
(the command line, ``make_reconcile_handler``) holds an ``SqsJobStore`` and calls it
directly. The operator calls on a store's blocking face (``sync``) are likewise the
command line's, on ``SqsJobStore``. A store author has no use for them; the
conformance suite uses them to check that each store has the calls, and on each face,
that its table says. ``sqsjobs.core.store`` declared them in 0.2, and still gives them
from here with a ``DeprecationWarning``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from sqsjobs.core.presence import WorkerPresence
from sqsjobs.core.reports import (
    DeadLetter,
    QueueStats,
    ReconcileReport,
    RedriveProgress,
    RedriveReport,
)


@runtime_checkable
class DeadLetterStore(Protocol):
    """The messages waiting in the dead-letter queues, with their jobs; none removed."""

    async def dead_letters(
        self, queue: str | None = None, *, limit: int = 100, name: str | None = None
    ) -> list[DeadLetter]: ...


@runtime_checkable
class ReconcileStore(Protocol):
    """One reconciler pass: lost messages re-sent, redriven jobs recorded dead."""

    async def reconcile(
        self, *, grace: float = 900.0, queues: Sequence[str] | None = None
    ) -> ReconcileReport: ...


@runtime_checkable
class SyncRetryStore(Protocol):
    def retry(self, job_id: str, now: float) -> bool: ...


@runtime_checkable
class SyncRedriveStore(Protocol):
    def redrive(
        self,
        queue: str | None = None,
        *,
        limit: int | None = None,
        on_progress: RedriveProgress | None = None,
        name: str | None = None,
    ) -> RedriveReport: ...


@runtime_checkable
class SyncStatsStore(Protocol):
    def stats(self, queues: Sequence[str] | None = None) -> list[QueueStats]: ...


@runtime_checkable
class SyncDepthStore(Protocol):
    def dead_letter_depths(self, queues: Sequence[str] | None = None) -> dict[str, int]: ...


@runtime_checkable
class SyncDeadLetterStore(Protocol):
    def dead_letters(
        self, queue: str | None = None, *, limit: int = 100, name: str | None = None
    ) -> list[DeadLetter]: ...


@runtime_checkable
class SyncReconcileStore(Protocol):
    def reconcile(
        self, *, grace: float = 900.0, queues: Sequence[str] | None = None
    ) -> ReconcileReport: ...


@runtime_checkable
class SyncPresenceStore(Protocol):
    def put_presence(self, presence: WorkerPresence) -> None: ...

    def end_presence(self, worker_id: str, now: float) -> None: ...

    def presences(self, now: float) -> list[WorkerPresence]: ...
