"""What a conformance test gets: a store, the clock it judges time by, and a way to let time pass.

The memory store runs on a fake clock that ``advance`` moves at once. A store whose
timers are real (SQS visibility and delays) runs on the real clock, and ``advance``
sleeps; tests therefore keep durations short (leases and delays of a second or two).
Every harness offers the queues ``default`` and ``other``, and its store keeps terminal
records for ``RETENTION`` seconds (``DEAD_RETENTION`` for dead ones).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqsjobs import JobStore

QUEUES = ("default", "other")
# Every harness builds its store with these, so retention tests need only a short wait.
# On a real clock the readers' own requests take time (a loaded emulator can spend a
# second on one check), so the windows leave seconds of room on either side.
RETENTION = 4.0
DEAD_RETENTION = 8.0


@dataclass
class Harness:
    kind: str
    store: JobStore
    clock: Callable[[], float]
    advance_clock: Callable[[float], object]

    def now(self) -> float:
        return self.clock()

    async def advance(self, seconds: float) -> None:
        result = self.advance_clock(seconds)
        if hasattr(result, "__await__"):
            await result  # type: ignore[misc]
