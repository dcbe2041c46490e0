"""Reads that every viewer shares: one store read per refresh interval per process.

Each open tab refreshes the overview (and the dead-letter page its DLQ depths) every few
seconds. Were each refresh a read of the store, the bill would grow with the number of
viewers, and so would the load on a provisioned table the workers need. A result is kept
for the refresh interval and given to every request within it; a request arriving while
the read is in flight waits for that read. A read that fails is not kept. An action
(cancel, retry, redrive) drops what is kept, so the operator sees its effect at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Shared:
    """Results of reads by name, each kept ``window`` seconds (0: only while in flight)."""

    def __init__(self, window: float, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.window = window
        self._monotonic = monotonic
        # name -> (the loop it ran on, when it began, its task)
        self._kept: dict[str, tuple[asyncio.AbstractEventLoop, float, asyncio.Task[Any]]] = {}

    async def read(self, name: str, read: Callable[[], Awaitable[T]]) -> T:
        """``read()``'s result, shared with every caller of ``name`` within the window."""
        loop = asyncio.get_running_loop()
        now = self._monotonic()
        kept = self._kept.get(name)
        if kept is None or not self._usable(kept, loop, now):
            task: asyncio.Task[T] = loop.create_task(_awaited(read))
            task.add_done_callback(lambda done: self._drop_failed(name, done))
            kept = (loop, now, task)
            self._kept[name] = kept
        result: T = await asyncio.shield(kept[2])
        return result

    def forget(self) -> None:
        """Drop every kept result: the next read of each goes to the store."""
        self._kept.clear()

    def _usable(
        self,
        kept: tuple[asyncio.AbstractEventLoop, float, asyncio.Task[Any]],
        loop: Any,
        now: float,
    ) -> bool:
        held_loop, began, task = kept
        if held_loop is not loop:  # a task belongs to the loop it runs on
            return False
        return not task.done() or now - began < self.window

    def _drop_failed(self, name: str, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or task.exception() is not None:
            kept = self._kept.get(name)
            if kept is not None and kept[2] is task:
                del self._kept[name]


async def _awaited(read: Callable[[], Awaitable[T]]) -> T:
    return await read()
