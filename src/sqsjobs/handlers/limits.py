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
short, jittered delay, its attempt not counted: ``worker.permits`` takes and frees the
slots for a run.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from ..core.errors import JobConfigError
from ..core.models import Job
from ..core.validation import Span, integer, seconds

MAX_SLOTS = 100  # a start refused by every slot tries them all: one write each
WINDOW = Span(positive=True, maximum=86_400.0, why="one day")
Kind = Literal["concurrency", "rate"]


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
