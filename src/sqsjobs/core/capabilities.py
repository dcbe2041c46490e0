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
    ) -> None: ...

    async def batch_status(self, batch_id: str, now: float) -> BatchStatus | None: ...


@runtime_checkable
class SyncBatchStore(Protocol):
    """``BatchStore``'s blocking face."""

    def put_batch(
        self, batch_id: str, jobs: Sequence[Job], callbacks: Sequence[Job], now: float
    ) -> None: ...

    def batch_status(self, batch_id: str, now: float) -> BatchStatus | None: ...


@runtime_checkable
class TransactionStore(Protocol):
    """Jobs written in one DynamoDB transaction with the application's own entries
    (``items``, in the low-level client's ``TransactWriteItems`` format): all or none,
    their messages sent after the commit. Only a store over DynamoDB can offer it."""

    async def put_in_transaction(
        self, jobs: Sequence[tuple[Job, str | None]], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]: ...


@runtime_checkable
class SyncTransactionStore(Protocol):
    """``TransactionStore``'s blocking face."""

    def put_in_transaction(
        self, jobs: Sequence[tuple[Job, str | None]], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]: ...


@runtime_checkable
class PauseStore(Protocol):
    """Queues paused fleet-wide: while paused, no claim from that store's queue starts a
    job (the store's claim finds nothing; running jobs run on, enqueues are kept).
    ``paused`` maps each paused queue to when it was paused."""

    async def pause(self, queue: str, now: float) -> None: ...

    async def resume(self, queue: str, now: float) -> None: ...

    async def paused(self, now: float) -> Mapping[str, float]: ...


@runtime_checkable
class SyncPauseStore(Protocol):
    """``PauseStore``'s blocking face."""

    def pause(self, queue: str, now: float) -> None: ...

    def resume(self, queue: str, now: float) -> None: ...

    def paused(self, now: float) -> Mapping[str, float]: ...


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
