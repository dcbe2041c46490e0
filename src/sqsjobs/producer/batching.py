"""A batch's records, validated and built before anything is written (``queue.batch``).

Every job of the batch carries its id (``Job.batch_id``); each callback is a job that
waits for the batch (status ``waiting``, ``Job.batch_callback`` naming which), written
with them, so the callbacks' ids are known from the start and nothing a crash can cut
short has to create them later. A batch's jobs take neither idempotency keys nor parents:
a key already held would name a job outside the batch, and a job may wait for its
parents or be counted towards its batch's end, not both. ``core.batches`` has the rest.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence

from ..core.batches import BATCH_MAX, ON_COMPLETE, ON_SUCCESS
from ..core.errors import JobConfigError
from ..core.lifecycle import WAITING
from ..core.models import Job
from ..core.requests import EnqueueRequest
from .enqueue import Prepared, QueueConfig, prepare

BatchParts = tuple[str, list[Job], list[Job]]  # the batch's id, its jobs, its callbacks


def prepare_batch(
    config: QueueConfig,
    requests: Iterable[EnqueueRequest],
    callbacks: Sequence[tuple[str, EnqueueRequest | None]],
    now: float,
) -> BatchParts:
    """The batch's records; ``JobConfigError`` (nothing written) for a bad request."""
    batch_id = uuid.uuid4().hex
    members = [
        _member(config, request, index, batch_id, now) for index, request in enumerate(requests)
    ]
    if not 1 <= len(members) <= BATCH_MAX:
        raise JobConfigError(
            "invalid_option",
            f"a batch holds 1 to {BATCH_MAX} jobs, not {len(members)}; enqueue more as "
            "several batches",
        )
    made = [
        _callback(config, request, role, batch_id, now)
        for role, request in callbacks
        if request is not None
    ]
    return batch_id, members, made


def _checked(request: object, what: str) -> EnqueueRequest:
    if not isinstance(request, EnqueueRequest):
        raise JobConfigError(
            "invalid_option", f"{what} is a {type(request).__name__}; pass an EnqueueRequest"
        )
    if request.idempotency_key is not None or request.after or request.debounce_key:
        raise JobConfigError(
            "invalid_option",
            f"{what} has an idempotency key, parents (after) or a debounce key: a batch's "
            "jobs and callbacks take none of them",
        )
    return request


def _member(config: QueueConfig, request: object, index: int, batch_id: str, now: float) -> Job:
    prepared: Prepared = prepare(config, _checked(request, f"batch job {index}"), now)
    return prepared.job.model_copy(update={"batch_id": batch_id})


def _callback(
    config: QueueConfig, request: EnqueueRequest, role: str, batch_id: str, now: float
) -> Job:
    prepared = prepare(config, _checked(request, role), now)
    update = {"batch_id": batch_id, "batch_callback": role, "status": WAITING}
    return prepared.job.model_copy(update=update)


CALLBACK_ORDER = (ON_COMPLETE, ON_SUCCESS)
