"""One queue's indexes in the memory store, and the claimers waiting on it.

Three heaps whose entries carry a record's ``version`` at push time (``state``): an
entry whose version no longer matches is dropped when it surfaces. A claimer that found
nothing waits on a future here, which any thread resolves through the claimer's own
loop when a job becomes claimable.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass
class QueueIndex:
    ready: list[tuple[int, float, float, str, int]] = field(default_factory=list)
    delayed: list[tuple[float, str, int]] = field(default_factory=list)
    leases: list[tuple[float, str, int]] = field(default_factory=list)
    waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = field(
        default_factory=set
    )

    def wake(self) -> None:
        """Wake every claimer waiting on this queue, on its own loop."""
        for loop, future in self.waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
