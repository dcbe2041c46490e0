"""The store capabilities for running and overseeing jobs: what the worker and the Lambda
handler look for (limit slots, claims that outlive their caller, delays in steps,
presence records) and what the dashboard does (retry, redrive, counts, dead-letter
depths, the configured queues). Each is a runtime-checkable protocol that
``sqsjobs.core.store`` re-exports and documents in its table, with who looks for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .presence import WorkerPresence
    from .reports import QueueStats, RedriveProgress, RedriveReport


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
    ) -> SlotTaken:
        """Hold the first free slot of ``key``, trying them in ``order``.

        Args:
            key: The limit's key (``concurrency/{name}``, ``rate/{name}``, per tenant too).
            order: The slot numbers to try, in turn (callers shuffle them, so runs do not
                all contend for slot 0).
            holder: Who holds the slot taken: only it may extend or free it.
            until: When the hold runs out unless ``extend_slot`` moves it.
            now: The caller's time, which decides whether a held slot has run out.

        Returns:
            The slot taken, or (every slot tried being held) when the first of them frees.
        """

    async def extend_slot(self, key: str, slot: int, holder: str, until: float, now: float) -> bool:
        """Hold ``slot`` of ``key`` until ``until``; False if ``holder`` no longer holds it."""

    async def free_slot(self, key: str, slot: int, holder: str, now: float) -> bool:
        """Free ``slot`` of ``key`` at once; False (nothing done) if ``holder`` lost it."""


@runtime_checkable
class CancelledClaimsStore(Protocol):
    """A store whose claims can outlive their caller: SQS runs a cancelled long poll on
    until its wait ends. A stopping worker waits for what those polls bring to be handed
    back (``worker.drain``); a store that waits in-process has nothing to wait for."""

    async def wait_cancelled_claims(self) -> None:
        """Return once every claim cancelled so far has ended and handed back its jobs."""


@runtime_checkable
class SteppedDelayStore(Protocol):
    """A store whose delays come in steps: SQS hides a message for whole seconds, so a
    retry asked for 0.02 s comes back a second later. What the worker logs is this."""

    def effective_delay(self, delay: float) -> float:
        """The delay, in seconds, the store really applies when ``delay`` is asked for."""


def effective_delay(store: object, delay: float) -> float:
    """``delay`` as ``store`` carries it out (``SteppedDelayStore``), else as asked."""
    return store.effective_delay(delay) if isinstance(store, SteppedDelayStore) else delay


@runtime_checkable
class RetryStore(Protocol):
    """Run a dead job again, attempts reset; False if unknown, expired or not dead."""

    async def retry(self, job_id: str, now: float) -> bool:
        """Queue dead job ``job_id`` to run now with its attempts reset (its last error
        kept); False, with nothing done, for a job that is unknown, expired or not dead."""


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
    ) -> RedriveReport:
        """Send dead jobs back to run again; ``on_progress`` hears the report so far
        after each batch, so a long redrive can show how far it is."""


@runtime_checkable
class StatsStore(Protocol):
    """Per queue: its jobs by status and its message depths."""

    async def stats(self, queues: Sequence[str] | None = None) -> list[QueueStats]:
        """One ``QueueStats`` per queue of ``queues`` (every queue the store has if None)."""


@runtime_checkable
class DepthStore(Protocol):
    """How many messages wait in each queue's dead-letter queue, from the queues alone:
    a read that costs one request per queue, whatever the store keeps."""

    async def dead_letter_depths(self, queues: Sequence[str] | None = None) -> dict[str, int]:
        """Messages visible in each queue's DLQ (of ``queues``, or all), by queue name."""


@runtime_checkable
class RoutedStore(Protocol):
    """A store configured with named queues (their URLs), known without a request."""

    @property
    def queue_urls(self) -> Mapping[str, str]:
        """Each configured queue's URL, by queue name."""


@runtime_checkable
class PresenceStore(Protocol):
    """Which workers are alive (``core.presence``): each writes its own record, readers
    list the records that have not run out by ``now``. Writes never raise for a record
    that is gone: ending one that already ran out changes nothing."""

    async def put_presence(self, presence: WorkerPresence) -> None:
        """Write a worker's presence record, replacing the one it wrote before."""

    async def end_presence(self, worker_id: str, now: float) -> None:
        """End ``worker_id``'s record at ``now``: a worker stopping cleanly is gone at once."""

    async def presences(self, now: float) -> list[WorkerPresence]:
        """The workers whose presence records have not run out by ``now``."""
