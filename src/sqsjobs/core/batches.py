"""Batches: a set of jobs enqueued together, and the callbacks that follow their end.

``JobQueue.batch(requests, on_complete=..., on_success=...)`` writes every job with the
batch's id (``Job.batch_id``) and each callback as a job that waits (status ``waiting``)
for the batch: ``on_complete`` runs once every job of the batch has ended, whatever how;
``on_success`` once they all completed, and is cancelled otherwise. A callback's handler
reads the batch's figures from ``ctx.batch``. NamedTuples, not dataclasses: a Lambda
function's handler loads this module at its cold start.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .models import Job

ON_COMPLETE = "on_complete"
ON_SUCCESS = "on_success"
CALLBACKS = (ON_COMPLETE, ON_SUCCESS)
BATCH_MAX = 10_000  # jobs in one batch


class Batch(NamedTuple):
    """A batch as written: its id, its jobs' ids in request order, and its callbacks'."""

    id: str
    job_ids: tuple[str, ...]
    callback_ids: tuple[str, ...] = ()


class BatchStatus(NamedTuple):
    """How far a batch has come: its jobs by how they ended, and its callbacks' ids."""

    id: str
    total: int
    completed: int
    dead: int
    cancelled: int
    open: int  # not ended yet: waiting, queued, delayed or running
    callback_ids: tuple[str, ...]
    # The tenant all its jobs and callbacks share; None when they have none, or several.
    tenant: str | None = None

    @property
    def ended(self) -> bool:
        """Whether every job of the batch has ended: ``on_complete`` is released then."""
        return self.open == 0

    @property
    def succeeded(self) -> bool:
        """Whether every job of the batch completed: what ``on_success`` runs on."""
        return self.completed == self.total


def batch_tenant(jobs: Iterable[Job]) -> str | None:
    """The tenant every one of ``jobs`` has, else None: what a tenant's view may read."""
    tenants = {job.tenant for job in jobs}
    return next(iter(tenants)) if len(tenants) == 1 else None


def batch_callback_error(status: BatchStatus) -> str:
    """``last_error`` of an ``on_success`` callback cancelled because some jobs failed."""
    return (
        f"batch {status.id} did not succeed: {status.dead} dead and {status.cancelled} "
        f"cancelled of {status.total} jobs"
    )
