"""What a job with parents (``enqueue(after=...)``) is handed: their results.

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

from ..core.lifecycle import COMPLETED
from ..core.models import Job
from ..core.store import JobStore

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
