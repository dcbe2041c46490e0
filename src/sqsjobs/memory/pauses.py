"""Paused queues in the memory store: a claim from one finds nothing, and a resume wakes
its waiting claimers at once (one process: no one else needs telling)."""

from __future__ import annotations

import threading
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .queue_index import QueueIndex


class PauseRules:
    """The pauses' side of a ``MemoryCore``: a base of it, under its lock."""

    lock: threading.Lock
    queues: dict[str, QueueIndex]

    def __init__(self) -> None:
        super().__init__()
        self.paused_since: dict[str, float] = {}

    def pause(self, queue: str, now: float) -> None:
        with self.lock:
            self.paused_since.setdefault(queue, now)

    def resume(self, queue: str) -> None:
        with self.lock:
            self.paused_since.pop(queue, None)
            index = self.queues.get(queue)
            if index is not None:
                index.wake()

    def paused(self) -> Mapping[str, float]:
        """Each paused queue, and when it was paused."""
        with self.lock:
            return MappingProxyType(dict(self.paused_since))
