"""What a job with parents (``enqueue(after=...)``) is handed: their results; and what
a batch's callback is: its batch's figures.

Read when its run starts, one ``get`` per parent, so a record carries ids, never copies
of results that may be large: ``ctx.parent_results`` maps each parent's id to its result,
in the order ``after`` named them. A parent whose record is gone by then (past its
retention) is left out, as nothing can say what it returned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..core.batches import BatchStatus
from ..core.lifecycle import COMPLETED
from ..core.models import Job
from ..core.store import JobStore, batch_store

NO_PARENTS: Mapping[str, Any] = MappingProxyType({})


async def parent_results(store: JobStore, job: Job, now: float) -> Mapping[str, Any]:
    """Each completed parent's result, by id (empty for a job without parents)."""
    if not job.after:
        return NO_PARENTS
    parents = await asyncio.gather(*(store.get(parent_id, now) for parent_id in job.after))
    found = {
        parent.id: parent.result
        for parent in parents
        if parent is not None and parent.status is COMPLETED
    }
    return MappingProxyType(found)


async def callback_batch(store: JobStore, job: Job, now: float) -> BatchStatus | None:
    """For a batch's callback, its batch as it is now; ``None`` for any other job."""
    if job.batch_callback is None or job.batch_id is None:
        return None
    return await batch_store(store).batch_status(job.batch_id, now)


async def handed(store: JobStore, job: Job, now: float) -> dict[str, Any]:
    """What a run hands its handler beside the job: ``JobContext``'s ``parent_results``
    and ``batch``."""
    return {
        "parent_results": await parent_results(store, job, now),
        "batch": await callback_batch(store, job, now),
    }
