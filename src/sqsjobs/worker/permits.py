"""The limit slots one run holds, and how long a run that found none waits.

What a handler's limits are is declared in ``handlers.limits``; this is the taking: a
run takes a slot of each limit through the store (``LimitStore``) before its handler
starts, extends the concurrency slots with each heartbeat and frees them once the
outcome is recorded. A run that cannot take one is deferred by ``defer_delay``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..core.errors import JobConfigError, describe_error
from ..core.store import JobStore, LimitStore
from ..handlers.limits import Kind, Limit
from ..observe.log import Event

DEFER_MIN = 0.05  # seconds; a deferral is never a busy loop
DEFER_SHORT = 1.0  # a concurrency slot frees when any run ends: look again soon
DEFER_MAX = 30.0
Log = Callable[..., None]  # the run's log: (level, event, message, **extra)


class Deferral(NamedTuple):
    """Why a run may not start now, and how long it waits before its job is claimable."""

    why: str
    delay: float


def defer_delay(kind: Kind | None, free_at: float | None, now: float, jitter: float) -> float:
    """How long a start that found no slot waits; ``jitter`` in [0, 1).

    A rate slot frees exactly when its window ends, so the job comes back then (a little
    after: never before). A concurrency slot frees whenever a run ends, long before its
    lease does, so the job looks again within about ``DEFER_SHORT``; so does a job
    deferred for its tenant's cap in a worker (``kind`` None).
    """
    wait = DEFER_SHORT if free_at is None else free_at - now
    if kind != "rate":
        wait = min(wait, DEFER_SHORT)
        return min(DEFER_MAX, max(DEFER_MIN, wait * (0.5 + jitter)))
    return min(DEFER_MAX, max(DEFER_MIN, wait) * (1 + 0.25 * jitter))


class Held(NamedTuple):
    limit: Limit
    slot: int


class Permits:
    """The slots one run holds, taken before its handler starts and freed after its outcome.

    The holder is the claim's lease token: new for every claim, so a later claim of the
    same job never mistakes an earlier run's slot for its own.
    """

    def __init__(self, store: JobStore, holder: str, log: Log, rng: random.Random) -> None:
        self.store = store
        self.holder = holder
        self.log = log
        self.rng = rng
        self.held: list[Held] = []

    async def take(
        self, limits: Sequence[Limit], lease_until: float, now: float
    ) -> Deferral | None:
        """Take one slot of every limit; on the first refusal free the rest and defer."""
        store = slot_store(self.store)
        for limit in limits:
            order = self.rng.sample(range(limit.slots), limit.slots)
            until = lease_until if limit.window is None else now + limit.window
            taken = await store.take_slot(limit.key, order, self.holder, until, now)
            if taken.slot is None:
                await self.free(now)
                delay = defer_delay(limit.kind, taken.free_at, now, self.rng.random())
                why = f"{limit.kind} limit {limit.key!r} ({limit.slots}) reached"
                return Deferral(why, delay)
            if limit.window is None:  # a rate slot is never extended nor freed
                self.held.append(Held(limit, taken.slot))
        return None

    async def extend(self, until: float, now: float) -> None:
        """Keep the concurrency slots for as long as the lease (each heartbeat)."""
        store = slot_store(self.store)
        for held in self.held:
            try:
                kept = await store.extend_slot(held.limit.key, held.slot, self.holder, until, now)
            except Exception as error:  # the next heartbeat tries again
                self._warn(
                    f"Extending slot {held.slot} of {held.limit.key!r} failed: "
                    f"{describe_error(error)}"
                )
                continue
            if not kept:
                self._warn(f"Slot {held.slot} of {held.limit.key!r} lapsed and was taken")

    async def free(self, now: float) -> None:
        """Free the concurrency slots; a free that fails leaves the slot to its lease."""
        held, self.held = self.held, []
        for one in held:
            try:
                await slot_store(self.store).free_slot(one.limit.key, one.slot, self.holder, now)
            except Exception as error:
                self._warn(
                    f"Freeing slot {one.slot} of {one.limit.key!r} failed "
                    f"({describe_error(error)}); it frees itself when its lease ends"
                )

    def _warn(self, message: str) -> None:
        self.log(logging.WARNING, Event.LIMIT_SLOT, message)


def slot_store(store: JobStore) -> LimitStore:
    """``store`` as a ``LimitStore``; a store without slots cannot run limited handlers."""
    if not isinstance(store, LimitStore):
        raise JobConfigError(
            "invalid_option",
            f"{type(store).__name__} has no limit slots (take_slot, extend_slot, free_slot): "
            "handlers with concurrency= or rate= need MemoryJobStore, SqsJobStore or a store "
            "that implements sqsjobs' LimitStore",
        )
    return store
