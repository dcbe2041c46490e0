"""What this process knows of the fleet's paused queues, and when it reads it again.

Reads are what a pause costs, so they are few:

- A running queue's claim reads nothing before it receives. Once messages are in hand
  it reads the control item if its copy is older than ``FRESH``, before claiming any,
  so a job can start at most ``FRESH`` seconds after its queue was paused. An idle
  queue's empty receives read nothing at all.
- A queue paused as last read is not received from: its claim re-reads every
  ``RECHECK`` seconds and otherwise waits, as an empty long poll would, so work starts
  again within ``RECHECK`` (plus a receive) of a resume.

One read serves every queue of the process (worker, Lambda handler and operator calls
share the store's state). Concurrent claims may both read when the copy turns stale:
a duplicate ``GetItem`` at worst, never a wrong answer, and no lock to tie the store
to one event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType

FRESH = 5.0  # seconds a copy is trusted by a claim with messages in hand
RECHECK = 8.0  # seconds between reads while a queue is paused

Read = Callable[[], Awaitable[Mapping[str, float]]]


class Pauses:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._paused: Mapping[str, float] = MappingProxyType({})
        self._read_at = float("-inf")

    def learn(self, paused: Mapping[str, float]) -> None:
        """Take a fresh read (a claim's, or this process's own pause, resume or read)."""
        self._paused, self._read_at = paused, self._clock()

    async def since(self, queue: str, read: Read, max_age: float | None = None) -> float | None:
        """When ``queue`` was paused (None: it is not), from a copy at most ``max_age``
        (default ``FRESH``) old."""
        if self._clock() - self._read_at > (FRESH if max_age is None else max_age):
            self.learn(await read())
        return self._paused.get(queue)

    async def hold(self, queue: str, read: Read, wait: float) -> bool:
        """Whether ``queue`` is paused as far as a claim about to receive can tell; if so,
        wait (up to ``wait`` seconds) until its next read is due, as a long poll would."""
        if queue not in self._paused:
            return False
        if await self.since(queue, read, RECHECK) is None:
            return False
        next_read = self._read_at + RECHECK - self._clock()
        await asyncio.sleep(max(0.0, min(wait, next_read)))
        return True
