"""The presence calls (``core.store.PresenceStore``) on both faces of an ``SqsJobStore``.

Each face drives the flows of ``operations`` as its other calls do: ``SqsJobStore`` on
its async transport (``_run``), ``SqsSyncView`` on boto3 (``StoreState.run_sync``). They
are written here, as bases of the two classes, so the store's module keeps to its
claiming and settling; the Lambda handler's threaded twin (``lambda_mode``) inherits them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import operations
from .state import AsyncCalls, StoreState

if TYPE_CHECKING:
    from ...core.presence import WorkerPresence


class PresenceCalls(AsyncCalls):
    """``PresenceStore`` on the async face."""

    async def put_presence(self, presence: WorkerPresence) -> None:
        """Write a worker's presence record (``core.presence``), replacing its last."""
        await self._run(operations.put_presence(self._state, presence))

    async def end_presence(self, worker_id: str, now: float) -> None:
        """Make a worker's record run out at ``now`` (a clean stop)."""
        await self._run(operations.end_presence(self._state, worker_id, now))

    async def presences(self, now: float) -> list[WorkerPresence]:
        """The workers whose records have not run out by ``now``; see ``flows.presence``."""
        return await self._run(operations.presences(self._state, now))


class SyncPresenceCalls:
    """The same calls on the blocking face (``sqsjobs workers`` reads them there)."""

    _state: StoreState

    def put_presence(self, presence: WorkerPresence) -> None:
        """Blocking twin of ``SqsJobStore.put_presence``."""
        self._state.run_sync(operations.put_presence(self._state, presence))

    def end_presence(self, worker_id: str, now: float) -> None:
        """Blocking twin of ``SqsJobStore.end_presence``."""
        self._state.run_sync(operations.end_presence(self._state, worker_id, now))

    def presences(self, now: float) -> list[WorkerPresence]:
        """Blocking twin of ``SqsJobStore.presences``."""
        return self._state.run_sync(operations.presences(self._state, now))
