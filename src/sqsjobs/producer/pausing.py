"""``pause``, ``resume`` and ``paused`` for both producer faces: one queue's jobs held
fleet-wide, on any store that keeps pauses (``core.store.PauseStore``)."""

from __future__ import annotations

from abc import ABC, abstractmethod

from ..core.store import PauseStore, SyncPauseStore
from ..core.validation import check_queue_name


class AsyncPausing(ABC):
    @abstractmethod
    def _pausing(self) -> tuple[PauseStore, float]:
        """The store that keeps pauses (else ``JobConfigError``), and now."""

    @abstractmethod
    def _logged_pause(self, queue: str, paused: bool) -> None: ...

    async def pause(self, queue_name: str) -> None:
        """Pause ``queue_name`` for the whole fleet: within seconds no worker or Lambda
        handler starts a job of it; running jobs finish, enqueues are kept, and its
        messages wait without counting toward the dead-letter queue (``flows.pauses``).
        A worker of a release before pauses existed does not know them.

        Args:
            queue_name: The queue to pause; pausing a paused queue changes nothing.

        Raises:
            JobConfigError: An invalid queue name, a queue an ``SqsJobStore`` lacks, or a
                store that keeps no pauses (``PauseStore``).
        """
        queue = check_queue_name(queue_name)
        store, now = self._pausing()
        await store.pause(queue, now)
        self._logged_pause(queue, True)

    async def resume(self, queue_name: str) -> None:
        """Start ``queue_name``'s jobs again, within seconds on every worker.

        Args:
            queue_name: The queue to resume; one not paused is left as it is.

        Raises:
            JobConfigError: As for ``pause``.
        """
        queue = check_queue_name(queue_name)
        store, now = self._pausing()
        await store.resume(queue, now)
        self._logged_pause(queue, False)

    async def paused(self) -> frozenset[str]:
        """The queues paused now, fleet-wide.

        Raises:
            JobConfigError: The store keeps no pauses.
        """
        store, now = self._pausing()
        return frozenset(await store.paused(now))


class SyncPausing(ABC):
    @abstractmethod
    def _pausing(self) -> tuple[SyncPauseStore, float]:
        """The blocking store that keeps pauses (else ``JobConfigError``), and now."""

    @abstractmethod
    def _logged_pause(self, queue: str, paused: bool) -> None: ...

    def pause(self, queue_name: str) -> None:
        """Blocking form of [`JobQueue.pause`][sqsjobs.JobQueue.pause]."""
        queue = check_queue_name(queue_name)
        store, now = self._pausing()
        store.pause(queue, now)
        self._logged_pause(queue, True)

    def resume(self, queue_name: str) -> None:
        """Blocking form of [`JobQueue.resume`][sqsjobs.JobQueue.resume]."""
        queue = check_queue_name(queue_name)
        store, now = self._pausing()
        store.resume(queue, now)
        self._logged_pause(queue, False)

    def paused(self) -> frozenset[str]:
        """Blocking form of [`JobQueue.paused`][sqsjobs.JobQueue.paused]."""
        store, now = self._pausing()
        return frozenset(store.paused(now))
