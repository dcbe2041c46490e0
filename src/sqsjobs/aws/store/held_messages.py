"""Messages received ahead of a claim: one ``ReceiveMessage`` serves several claims.

A worker claims only as many jobs as it has free slots, often one at a time as slots
free up, but a receive returns up to ten messages for the price of one request. The
store receives ten, claims what was asked, and holds the rest here, unclaimed: their
records are untouched and no attempt is spent. The next claims take them without a
request. A held message that nobody takes within ``HOLD`` seconds is handed back to
the queue (visibility 0, so other workers get it at once), and the queue stops
receiving ahead for ``COOL_DOWN`` seconds, because its claims are evidently slower
than its messages. So under load SQS receives approach one per ten jobs, and a busy
worker never keeps messages from idle ones for more than ``HOLD`` seconds.
"""

from __future__ import annotations

import threading
from collections import deque

from ..wire.sqs import MAX_BATCH, Message

HOLD = 1.0
COOL_DOWN = 10.0


class _Queue:
    __slots__ = ("messages", "quiet_until")

    def __init__(self) -> None:
        self.messages: deque[tuple[float, Message]] = deque()
        self.quiet_until = 0.0


class HeldMessages:
    """Per SQS queue (by URL: a lane is one too): messages received but not yet claimed,
    oldest first."""

    def __init__(self) -> None:
        self._queues: dict[str, _Queue] = {}
        self._lock = threading.Lock()

    def take(self, url: str, limit: int, now: float) -> list[Message]:
        """Up to ``limit`` messages held for less than ``HOLD`` seconds."""
        with self._lock:
            held = self._queues.get(url)
            taken: list[Message] = []
            while held and held.messages and len(taken) < limit:
                received, message = held.messages.popleft()
                if now - received < HOLD:
                    taken.append(message)
                else:
                    held.messages.appendleft((received, message))
                    break
            return taken

    def receive_size(self, url: str, limit: int, now: float) -> int:
        """How many messages to ask for: ten, unless holding them has not paid lately."""
        with self._lock:
            held = self._queues.get(url)
            quiet = held is not None and now < held.quiet_until
        return min(limit, MAX_BATCH) if quiet else MAX_BATCH

    def hold(self, url: str, messages: list[Message], now: float) -> None:
        with self._lock:
            held = self._queues.setdefault(url, _Queue())
            held.messages.extend((now, message) for message in messages)

    def take_overdue(self, url: str, now: float) -> tuple[list[Message], float | None]:
        """Messages held too long (to hand back), and when the next one will be."""
        with self._lock:
            held = self._queues.get(url)
            if held is None:
                return [], None
            stale: list[Message] = []
            while held.messages and now - held.messages[0][0] >= HOLD:
                stale.append(held.messages.popleft()[1])
            if stale:
                held.quiet_until = now + COOL_DOWN
            due = held.messages[0][0] + HOLD if held.messages else None
            return stale, due

    def take_all(self) -> dict[str, list[Message]]:
        with self._lock:
            everything = {q: [m for _, m in h.messages] for q, h in self._queues.items()}
            for held in self._queues.values():
                held.messages.clear()
            return {q: ms for q, ms in everything.items() if ms}
