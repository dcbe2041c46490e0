"""The limit slots (``core.store.LimitStore``) on the async face of an ``SqsJobStore``.

``sqsjobs.worker.permits`` takes, extends and frees them around a limited handler's
runs; each call drives its flow of ``operations`` (``flows.limits``: one conditional
write per slot tried). Written here, as a base of ``SqsJobStore``, as the presence calls
are (``presence``), so the store's module keeps to construction, the producer's calls
and the operators; the Lambda handler's threaded twin (``lambda_mode``) inherits them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...core.store import SlotTaken
from . import operations
from .state import AsyncCalls


class SlotCalls(AsyncCalls):
    """``LimitStore`` on the async face."""

    async def take_slot(
        self, key: str, order: Sequence[int], holder: str, until: float, now: float
    ) -> SlotTaken:
        """Hold the first free slot of ``key`` in ``order`` (``LimitStore.take_slot``)."""
        flow = operations.take_slot(self._state, key, order, holder, until, now)
        return SlotTaken(*await self._run(flow))

    async def extend_slot(self, key: str, slot: int, holder: str, until: float, now: float) -> bool:
        """Hold ``slot`` until ``until``; False if ``holder`` lost it."""
        return await self._run(operations.extend_slot(self._state, key, slot, holder, until))

    async def free_slot(self, key: str, slot: int, holder: str, now: float) -> bool:
        """Free ``slot`` at once; False if ``holder`` lost it."""
        return await self._run(operations.free_slot(self._state, key, slot, holder))
