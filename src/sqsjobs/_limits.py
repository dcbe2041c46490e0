"""Handler limits: runs of a job name at once, and starts per window, across the fleet.

``@registry.handler(name, concurrency=N, rate=(count, per_seconds), per_tenant=False)``
declares them; every worker process and Lambda invocation sharing a store enforces them
through the store's slots (``LimitStore``), not through anything held in one process:

- a **limit key** names what one limit counts: ``concurrency/{name}`` or
  ``rate/{name}``, with ``/{tenant}`` appended when ``per_tenant`` (``/-`` for jobs with
  no tenant, which no tenant id can spell);
- **concurrency**: ``N`` slots; a run takes one before its handler starts, holds it for
  its job's lease, extends it with each heartbeat, and frees it once the outcome is
  recorded. A holder that crashed stops extending, and its slot frees itself when the
  lease ends;
- **rate**: ``count`` slots; a start takes one and holds it for ``per_seconds``, never
  freed early, so no window of ``per_seconds`` sees more than ``count`` starts.

Slots are tried in a random order (so runs do not all fight over slot 0), stopping at
the first taken. A run that cannot take one goes back to its queue ``delayed`` by a
short, jittered delay (``defer_delay``), its attempt not counted.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from ._errors import JobConfigError, describe_error
from ._log import Event
from ._models import Job
from ._store import JobStore, LimitStore
from ._validation import Span, integer, seconds

MAX_SLOTS = 100  # a start refused by every slot tries them all: one write each
WINDOW = Span(positive=True, maximum=86_400.0, why="one day")
DEFER_MIN = 0.05  # seconds; a deferral is never a busy loop
DEFER_SHORT = 1.0  # a concurrency slot frees when any run ends: look again soon
DEFER_MAX = 30.0
Kind = Literal["concurrency", "rate"]
Log = Callable[..., None]  # the run's log: (level, event, message, **extra)


class Limit(NamedTuple):
    """One limit as it applies to one job: which slots, how many, how long a start holds one."""

    kind: Kind
    key: str
    slots: int
    window: float | None  # rate: seconds a start holds its slot; concurrency: the lease


class HandlerLimits(NamedTuple):
    concurrency: int | None = None
    rate: tuple[int, float] | None = None
    per_tenant: bool = False

    @classmethod
    def build(
        cls, *, concurrency: object = None, rate: object = None, per_tenant: object = False
    ) -> HandlerLimits | None:
        """Checked at the decorator; ``None`` when the handler declares no limit."""
        if not isinstance(per_tenant, bool):
            raise JobConfigError(
                "invalid_option", f"Invalid per_tenant {per_tenant!r}: must be True or False"
            )
        if concurrency is None and rate is None:
            if per_tenant:
                raise JobConfigError(
                    "invalid_option",
                    "per_tenant=True needs a limit to apply per tenant: concurrency= or rate=",
                )
            return None
        return cls(
            None if concurrency is None else _slots(concurrency, "concurrency"),
            None if rate is None else _rate(rate),
            per_tenant,
        )

    def for_job(self, job: Job) -> list[Limit]:
        """The limits ``job`` must fit, concurrency first (a refused rate frees it again)."""
        scope = job.name if not self.per_tenant else f"{job.name}/{job.tenant or '-'}"
        limits: list[Limit] = []
        if self.concurrency is not None:
            limits.append(Limit("concurrency", f"concurrency/{scope}", self.concurrency, None))
        if self.rate is not None:
            count, per = self.rate
            limits.append(Limit("rate", f"rate/{scope}", count, per))
        return limits

    def describe(self) -> str:
        parts = [] if self.concurrency is None else [f"concurrency {self.concurrency}"]
        if self.rate is not None:
            parts.append(f"rate {self.rate[0]} per {self.rate[1]:g}s")
        return ", ".join(parts) + (" per tenant" if self.per_tenant else "")


def _slots(value: object, what: str) -> int:
    why = "each start refused by every slot tries them all"
    return integer(value, what, minimum=1, maximum=MAX_SLOTS, why=why, code="invalid_option")


def _rate(value: object) -> tuple[int, float]:
    if not isinstance(value, tuple) or len(value) != 2:
        raise JobConfigError(
            "invalid_option",
            f"Invalid rate {value!r}: must be a tuple (count, per_seconds), e.g. (5, 1.0)",
        )
    count = _slots(value[0], "rate count")
    return count, seconds(value[1], "rate per_seconds", WINDOW, code="invalid_option")


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
