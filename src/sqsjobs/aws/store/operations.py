"""Every store call as one flow over a ``StoreState``, for either face to drive.

The async face drives these on aiobotocore, the blocking face (``sync``) on boto3: each
call is written once. Every call imports its flows on first use: a Lambda function that
only runs jobs claims and settles them (``claims``, ``flows.settle``) and never loads
the producer's writes, the lookups or the operator calls, nor pays for them at its cold
start (``bench/lambda_import.py``). The operator calls describe the queues they read first:
that is how a store learns the DLQs it was not given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...core.models import Job
from ..wire.protocol import Flow
from .state import StoreState

if TYPE_CHECKING:
    from ...core.batches import BatchStatus
    from ...core.presence import WorkerPresence
    from ...core.reports import DeadLetter, QueueStats, ReconcileReport, RedriveReport
    from ...core.requests import EnqueueResult, JobFilter, JobPage
    from ..flows.put import PutEntry
    from ..flows.record_formats import RecordFormats, Scanned
    from ..flows.redrive import Progress


def put_job(state: StoreState, job: Job, fingerprint: str | None) -> Flow[EnqueueResult]:
    from ..flows import put

    return put.put(state.layout, job, fingerprint, state.clock())


def put_jobs(state: StoreState, entries: Sequence[PutEntry]) -> Flow[list[EnqueueResult]]:
    from ..flows import put

    return put.put_many(state.layout, entries, state.clock())


def put_batch(
    state: StoreState, batch_id: str, jobs: Sequence[Job], callbacks: Sequence[Job]
) -> Flow[None]:
    from ..flows import batches

    return batches.put_batch(state.layout, batch_id, jobs, callbacks, state.clock())


def put_in_transaction(
    state: StoreState, entries: Sequence[PutEntry], items: Sequence[Mapping[str, Any]]
) -> Flow[list[EnqueueResult]]:
    from ..flows import transaction

    return transaction.put_in_transaction(state.layout, entries, items, state.clock())


def pause_queue(state: StoreState, queue: str, now: float) -> Flow[Mapping[str, float]]:
    from ..flows import pauses

    return pauses.pause(state.layout, queue, now)


def resume_queue(state: StoreState, queue: str) -> Flow[Mapping[str, float]]:
    from ..flows import pauses

    return pauses.resume(state.layout, queue)


def paused_queues(state: StoreState) -> Flow[Mapping[str, float]]:
    from ..flows import pauses

    return pauses.paused(state.layout)


def batch_status(state: StoreState, batch_id: str, now: float) -> Flow[BatchStatus | None]:
    from ..flows import batches

    return batches.status(state.layout, batch_id, now)


def get_job(state: StoreState, job_id: str, now: float) -> Flow[Job | None]:
    from ..flows import lookup

    return lookup.get(state.layout, job_id, now)


def cancel_job(state: StoreState, job_id: str, now: float, by: str | None = None) -> Flow[bool]:
    from ..flows import lookup

    return lookup.cancel(state.layout, job_id, now, by)


def list_jobs(
    state: StoreState, filter: JobFilter, limit: int, cursor: str | None, now: float
) -> Flow[JobPage]:
    from ..flows.listing import list_jobs

    layout = yield from state.indexed()
    return (yield from list_jobs(layout, filter, limit, cursor, now))


def reconcile(
    state: StoreState, grace: float, queues: Sequence[str] | None
) -> Flow[ReconcileReport]:
    from ..flows.reconcile import reconcile

    names = state.named(queues)
    yield from state.indexed()
    layout = yield from state.described(names)
    return (yield from reconcile(layout, names, state.clock(), grace))


def retry(state: StoreState, job_id: str, now: float, by: str | None = None) -> Flow[bool]:
    from ..flows.redrive import retry

    layout = yield from state.described(state.named(None))
    return (yield from retry(layout, job_id, now, by))


def dead_letters(
    state: StoreState, queue: str | None, limit: int, name: str | None = None
) -> Flow[list[DeadLetter]]:
    from ..flows.dead_letters import dead_letters

    names = state.named(None if queue is None else [queue])
    layout = yield from state.described(names)
    return (yield from dead_letters(layout, names, state.clock(), limit, name))


def redrive(
    state: StoreState,
    queue: str | None,
    limit: int | None,
    on_progress: Progress | None,
    name: str | None = None,
    by: str | None = None,
) -> Flow[RedriveReport]:
    from ..flows.redrive import redrive

    names = state.named(None if queue is None else [queue])
    layout = yield from state.described(names)
    return (yield from redrive(layout, names, state.clock(), limit, on_progress, name, by))


def dead_letter_depths(state: StoreState, queues: Sequence[str] | None) -> Flow[dict[str, int]]:
    from ..flows.stats import dead_letter_depths

    names = state.named(queues)
    layout = yield from state.described(names)
    return (yield from dead_letter_depths(layout, names))


def stats(state: StoreState, queues: Sequence[str] | None) -> Flow[list[QueueStats]]:
    from ..flows.stats import stats

    names = state.named(queues)
    yield from state.indexed()
    layout = yield from state.described(names)
    return (yield from stats(layout, names, state.clock()))


def record_formats(state: StoreState, on_page: Scanned | None) -> Flow[RecordFormats]:
    from ..flows.record_formats import record_formats

    return record_formats(state.layout, state.clock(), on_page)


def take_slot(
    state: StoreState, key: str, order: Sequence[int], holder: str, until: float, now: float
) -> Flow[tuple[int | None, float | None]]:
    from ..flows import limits

    return limits.take_slot(state.layout, key, order, holder, until, now)


def extend_slot(state: StoreState, key: str, slot: int, holder: str, until: float) -> Flow[bool]:
    from ..flows import limits

    return limits.extend_slot(state.layout, key, slot, holder, until)


def free_slot(state: StoreState, key: str, slot: int, holder: str) -> Flow[bool]:
    from ..flows import limits

    return limits.free_slot(state.layout, key, slot, holder)


def put_presence(state: StoreState, presence: WorkerPresence) -> Flow[None]:
    from ..flows import presence as flows

    return flows.put_presence(state.layout, presence)


def end_presence(state: StoreState, worker_id: str, now: float) -> Flow[None]:
    from ..flows import presence as flows

    return flows.end_presence(state.layout, worker_id, now)


def presences(state: StoreState, now: float) -> Flow[list[WorkerPresence]]:
    from ..flows import presence as flows

    return flows.presences(state.layout.table, now)
