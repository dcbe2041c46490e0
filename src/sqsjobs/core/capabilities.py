"""The store capabilities for composing and controlling jobs: batches, transactions with
the application's own writes, and pauses. Each is a runtime-checkable protocol that
``sqsjobs.core.store`` re-exports and documents in its table, with a helper that returns
the store if it has the capability, else a ``JobConfigError`` saying which store does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from .errors import JobConfigError
from .models import Job

if TYPE_CHECKING:
    from .batches import BatchStatus
    from .requests import EnqueueResult


@runtime_checkable
class BatchStore(Protocol):
    """Batches (``core.batches``): a batch's jobs and its waiting callbacks written
    together, all or none, and how far the batch has come. The store counts each job's
    end once, and releases the callbacks when the last one ends."""

    async def put_batch(
        self, batch_id: str, jobs: Sequence[Job], callbacks: Sequence[Job], now: float
    ) -> None:
        """Write a batch: its jobs and its callbacks, all or none.

        Args:
            batch_id: The batch's id, which every job and callback carries.
            jobs: The batch's jobs, prepared by the producer.
            callbacks: Jobs that wait (status ``waiting``) for the batch's end, each
                marked ``on_complete`` or ``on_success`` (``Job.batch_callback``).
            now: The caller's time.

        Raises:
            JobConfigError: The store cannot take the batch; nothing was written.
        """

    async def batch_status(self, batch_id: str, now: float) -> BatchStatus | None:
        """How far the batch has come, or None for an id with no batch."""


@runtime_checkable
class SyncBatchStore(Protocol):
    """``BatchStore``'s blocking face."""

    def put_batch(
        self, batch_id: str, jobs: Sequence[Job], callbacks: Sequence[Job], now: float
    ) -> None:
        """Blocking form of [`BatchStore.put_batch`][sqsjobs.store.BatchStore.put_batch]."""

    def batch_status(self, batch_id: str, now: float) -> BatchStatus | None:
        """Blocking form of [`BatchStore.batch_status`][sqsjobs.store.BatchStore.batch_status]."""


@runtime_checkable
class TransactionStore(Protocol):
    """Jobs written in one DynamoDB transaction with the application's own entries
    (``items``, in the low-level client's ``TransactWriteItems`` format): all or none,
    their messages sent after the commit. Only a store over DynamoDB can offer it."""

    async def put_in_transaction(
        self, jobs: Sequence[tuple[Job, str | None]], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]:
        """Commit the jobs' records with ``items``, then send the jobs' messages.

        Args:
            jobs: Each job with its fingerprint, as ``JobStore.put_many`` takes them.
            items: The application's ``TransactWriteItems`` entries, written as given.

        Returns:
            One result per job, in order; a key's live job is returned as a duplicate.

        Raises:
            JobTransactionError: DynamoDB cancelled the transaction (its reasons, per
                entry); nothing of it was written.
        """


@runtime_checkable
class SyncTransactionStore(Protocol):
    """``TransactionStore``'s blocking face."""

    def put_in_transaction(
        self, jobs: Sequence[tuple[Job, str | None]], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]:
        """Blocking form of
        [`TransactionStore.put_in_transaction`][sqsjobs.store.TransactionStore.put_in_transaction]."""


@runtime_checkable
class PauseStore(Protocol):
    """Queues paused fleet-wide: while paused, no claim from that store's queue starts a
    job (the store's claim finds nothing; running jobs run on, enqueues are kept).
    ``paused`` maps each paused queue to when it was paused."""

    async def pause(self, queue: str, now: float) -> None:
        """Pause ``queue`` from ``now``; a paused queue keeps the time it was first paused."""

    async def resume(self, queue: str, now: float) -> None:
        """Let claims from ``queue`` start jobs again; a queue not paused is left as is."""

    async def paused(self, now: float) -> Mapping[str, float]:
        """Each paused queue, and when it was paused (epoch seconds)."""


@runtime_checkable
class SyncPauseStore(Protocol):
    """``PauseStore``'s blocking face."""

    def pause(self, queue: str, now: float) -> None:
        """Blocking form of [`PauseStore.pause`][sqsjobs.store.PauseStore.pause]."""

    def resume(self, queue: str, now: float) -> None:
        """Blocking form of [`PauseStore.resume`][sqsjobs.store.PauseStore.resume]."""

    def paused(self, now: float) -> Mapping[str, float]:
        """Blocking form of [`PauseStore.paused`][sqsjobs.store.PauseStore.paused]."""


def pause_store(store: object) -> PauseStore:
    """``store`` if it pauses queues, else a ``JobConfigError`` saying so."""
    return cast(PauseStore, _pausing(store))


def sync_pause_store(store: object) -> SyncPauseStore:
    """The blocking face ``store`` if it pauses queues, else a ``JobConfigError``."""
    return cast(SyncPauseStore, _pausing(store))


def _pausing(store: object) -> object:
    if not all(hasattr(store, call) for call in ("pause", "resume", "paused")):
        raise JobConfigError(
            "invalid_option",
            f"{type(store).__name__} cannot pause queues: pause, resume and paused need a "
            "store with them (PauseStore), as sqsjobs's own stores have",
        )
    return store


def transaction_store(store: object) -> TransactionStore:
    """``store`` if it writes jobs in the application's transactions, else a
    ``JobConfigError`` saying which store does."""
    return cast(TransactionStore, _transacting(store))


def sync_transaction_store(store: object) -> SyncTransactionStore:
    """The blocking face ``store`` if it writes jobs in transactions, else a
    ``JobConfigError``."""
    return cast(SyncTransactionStore, _transacting(store))


def _transacting(store: object) -> object:
    if not hasattr(store, "put_in_transaction"):
        raise JobConfigError(
            "invalid_option",
            f"{type(store).__name__} cannot write jobs in a DynamoDB transaction: "
            "enqueue_in_transaction needs SqsJobStore (TransactionStore); with this store, "
            "write your data and enqueue the jobs separately",
        )
    return store


def batch_store(store: object) -> BatchStore:
    """``store`` if it keeps batches, else a ``JobConfigError`` saying so."""
    return cast(BatchStore, _keeping_batches(store))


def sync_batch_store(store: object) -> SyncBatchStore:
    """The blocking face ``store`` if it keeps batches, else a ``JobConfigError``."""
    return cast(SyncBatchStore, _keeping_batches(store))


def _keeping_batches(store: object) -> object:
    if not (hasattr(store, "put_batch") and hasattr(store, "batch_status")):
        raise JobConfigError(
            "invalid_option",
            f"{type(store).__name__} keeps no batches: queue.batch needs a store with "
            "put_batch and batch_status (BatchStore), as sqsjobs's own stores have",
        )
    return store
