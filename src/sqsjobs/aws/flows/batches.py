"""Batches on DynamoDB and SQS: written, counted once per job, ended once (``wire.batches``).

``put_batch`` writes the root, the shards, the jobs with their messages, and last the
callbacks, waiting for the batch (``awaiting`` names ``batch#{id}``, so ``flows.waiting``
releases them as it releases any child): a put cut short leaves jobs that run and never
a callback of a batch that was not all written. Then, for each job that ends::

    its ending write ──► count it in its shard, with its ``batch_counted`` (one transaction)
      ──► the shard's counts reach its size ──► its number into the root's ``done``
        ──► every shard done ──► release ``on_complete``; release ``on_success`` if every
            job completed, else cancel it; close the batch

Each step is conditional or idempotent, so a step tried again (an outcome's retry)
changes nothing a first try did. A crash between them leaves an open batch (its root is
in the list index's ``!batches`` partition until closed): the reconciler reads open
batches older than its grace, counts the jobs that ended uncounted, and takes each step
that was not taken (``settle_open``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...core.batches import ON_SUCCESS, BatchStatus, batch_callback_error, batch_tenant
from ...core.errors import JobConfigError
from ...core.lifecycle import COMPLETED, TERMINAL, retention_end
from ...core.models import Job
from ..wire import batches, index_reads
from ..wire.index_keys import list_sk
from ..wire.index_reads import CURRENT, FIRST_KEY, LAST_KEY
from ..wire.items import (
    AWAITING,
    BATCH_COUNTED,
    BATCH_SHARD,
    WAITS,
    Attributes,
    is_record,
    job_key,
    number,
    readable,
)
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Flow, Parallel
from . import waiting
from .batch_get import get_items
from .bodies import new_items, put_body
from .new_messages import deliver_all

OUTCOMES = ("completed", "dead", "cancelled")
PUTS_AT_ONCE = 10  # records written together, as ``enqueue_many`` writes them
COUNT_TRIES = 3  # a count meeting another transaction on its shard; then the reconciler's


def parent_of(batch_id: str) -> str:
    """What a batch's callbacks wait for (their ``awaiting``), as ``flows.waiting`` sees it."""
    return f"batch#{batch_id}"


def put_batch(
    layout: Layout, batch_id: str, jobs: Sequence[Job], callbacks: Sequence[Job], now: float
) -> Flow[None]:
    from .put import put_records, refuse_unsendable  # the producer's: not at a Lambda's start

    if layout.record_format < WAITS:
        raise JobConfigError(
            "invalid_option",
            f"queue.batch writes callbacks that 0.2 releases cannot read, and this store "
            f"writes record format {layout.record_format} for them: once no 0.2 release "
            f"reads the table, write format {WAITS}, the default",
        )
    for job in [*jobs, *callbacks]:
        refuse_unsendable(layout.url(job.queue), job, now)
    shards = math.ceil(len(jobs) / batches.SHARD_SIZE)
    roles = {job.batch_callback or "": job.id for job in callbacks}
    tenant = batch_tenant([*jobs, *callbacks])
    yield batches.put_root(layout.table, batch_id, len(jobs), shards, roles, tenant, now)
    yield from _all(
        batches.put_shard(layout.table, batch_id, k, [j.id for j in _shard(jobs, k)])
        for k in range(shards)
    )
    for start in range(0, len(jobs), PUTS_AT_ONCE):
        records, bodies = [], []
        for index, job in enumerate(jobs[start : start + PUTS_AT_ONCE], start):
            record, body = new_items(layout, job, None)
            record[BATCH_SHARD] = number(index // batches.SHARD_SIZE)
            records.append(record)
            bodies += [] if body is None else [put_body(layout.table, body)]
        yield from _all(bodies)  # a body before its record, which points at it
        yield from put_records(layout.table, records, now)
    yield from deliver_all(layout, jobs, now)
    records, bodies = [], []
    for callback in callbacks:
        record, body = new_items(layout, callback, None)
        record[AWAITING] = {"SS": [parent_of(batch_id)]}
        records.append(record)
        bodies += [] if body is None else [put_body(layout.table, body)]
    yield from _all(bodies)
    yield from put_records(layout.table, records, now)


def _shard(jobs: Sequence[Job], k: int) -> Sequence[Job]:
    return jobs[k * batches.SHARD_SIZE : (k + 1) * batches.SHARD_SIZE]


def _all(calls: object) -> Flow[None]:
    replies = yield Parallel(tuple(calls))  # type: ignore[arg-type]
    for reply in replies:
        if isinstance(reply, AwsError):
            raise reply


def ended(layout: Layout, item: Attributes | None, now: float) -> Flow[None]:
    """A job's ending write returned ``item``: count its end in its batch, once, and end
    the batch if that was its last job."""
    if item is None or not is_record(item) or BATCH_SHARD not in item or BATCH_COUNTED in item:
        return
    stored = readable(item, "UpdateItem")
    job, shard = stored.job, stored.batch_shard
    if job.status not in TERMINAL or job.batch_id is None or shard is None:
        return
    counted = yield from _count(layout, job, shard)
    if counted:
        yield from _after_count(layout, job.batch_id, shard, now)


def _count(layout: Layout, job: Job, shard: int) -> Flow[bool]:
    """Count ``job``'s end in its shard; False if it was counted already (or the tries met
    other transactions, which leaves it to the reconciler)."""
    assert job.batch_id is not None
    call = batches.count(layout.table, job_key(job.id), job.batch_id, shard, job.status.value)
    for _ in range(COUNT_TRIES):
        try:
            yield call
        except AwsError as error:
            if error.code != "TransactionCanceledException":
                raise
            reasons = getattr(error.cause, "response", {}).get("CancellationReasons", [])
            if reasons and reasons[0].get("Code") == "ConditionalCheckFailed":
                return False  # counted already
            continue  # a conflict with another count on the shard: try again
        return True
    return False


def _after_count(layout: Layout, batch_id: str, shard: int, now: float) -> Flow[None]:
    reply = yield batches.get(layout.table, batches.shard_key(batch_id, shard))
    item = reply.get("Item")
    if item is None or _ended_in(item) < len(item["jobs"]["SS"]):
        return
    root = (yield batches.shard_done(layout.table, batch_id, shard))["Attributes"]
    if len(root["done"]["NS"]) == int(root["shards"]["N"]):
        yield from _end(layout, batch_id, root, now)


def _ended_in(shard: Attributes) -> int:
    return sum(int(shard.get(outcome, {"N": "0"})["N"]) for outcome in OUTCOMES)


def _end(layout: Layout, batch_id: str, root: Attributes, now: float) -> Flow[None]:
    """Every job of the batch has ended: its callbacks released (or ``on_success``
    cancelled), then the batch closed."""
    status = yield from _status(layout, batch_id, root)
    for role, value in root["callbacks"]["M"].items():
        callback_id = value["S"]
        if role == ON_SUCCESS and not status.succeeded:
            error = batch_callback_error(status)
            yield from waiting.cancel_child(layout, callback_id, parent_of(batch_id), error, now)
        else:
            yield from waiting.parent_ended(
                layout, parent_of(batch_id), COMPLETED, [callback_id], now
            )
    expiry = retention_end(COMPLETED, now, layout.retention, layout.dead_retention)
    assert expiry is not None
    yield batches.close(layout.table, batch_id, now, expiry)


def status(layout: Layout, batch_id: str, now: float) -> Flow[BatchStatus | None]:
    """How far the batch has come; None for an id with no batch (or one past retention)."""
    reply = yield batches.get(layout.table, batches.root_key(batch_id))
    root = reply.get("Item")
    if root is None or ("expires_at" in root and float(root["expires_at"]["N"]) <= now):
        return None
    return (yield from _status(layout, batch_id, root))


def _status(layout: Layout, batch_id: str, root: Attributes) -> Flow[BatchStatus]:
    keys = [batches.shard_key(batch_id, k) for k in range(int(root["shards"]["N"]))]
    shards = yield from get_items(layout.table, keys, consistent=True)
    completed, dead, cancelled = (
        sum(int(s.get(o, {"N": "0"})["N"]) for s in shards) for o in OUTCOMES
    )
    total = int(root["total"]["N"])
    callbacks = tuple(value["S"] for value in root["callbacks"]["M"].values())
    open_ = total - completed - dead - cancelled
    tenant = root["tenant"]["S"] if "tenant" in root else None
    return BatchStatus(batch_id, total, completed, dead, cancelled, open_, callbacks, tenant)


def settle_open(layout: Layout, cutoff: float, now: float) -> Flow[int]:
    """The reconciler's part: open batches created before ``cutoff`` have the steps a
    crash skipped taken; how many jobs' ends it counted."""
    counted = 0
    start: dict[str, object] | None = None
    before = list_sk(cutoff + layout.clock_skew, LAST_KEY)
    roots: list[str] = []
    while True:
        reply = yield index_reads.query_index(
            layout.table, CURRENT, batches.OPEN_BATCHES, FIRST_KEY, before, limit=None, start=start
        )
        roots += [item["pk"]["S"].removeprefix("batch#") for item in reply.get("Items", [])]
        start = reply.get("LastEvaluatedKey")
        if start is None:
            break
    for batch_id in roots:
        counted += yield from _repair(layout, batch_id, now)
    return counted


def _repair(layout: Layout, batch_id: str, now: float) -> Flow[int]:
    reply = yield batches.get(layout.table, batches.root_key(batch_id))
    root = reply.get("Item")
    if root is None:
        return 0
    done = {int(k) for k in root.get("done", {}).get("NS", [])}
    counted = 0
    for k in range(int(root["shards"]["N"])):
        if k in done:
            continue
        shard = (yield batches.get(layout.table, batches.shard_key(batch_id, k))).get("Item")
        if shard is None:
            continue
        members = yield from get_items(
            layout.table, [job_key(j) for j in shard["jobs"]["SS"]], consistent=True
        )
        for member in members:
            stored = readable(member, "BatchGetItem")
            if stored.job.status in TERMINAL and BATCH_COUNTED not in member:
                counted += int((yield from _count(layout, stored.job, k)))
        yield from _after_count(layout, batch_id, k, now)
    root = (yield batches.get(layout.table, batches.root_key(batch_id))).get("Item")
    shards_done = 0 if root is None else len(root.get("done", {}).get("NS", []))
    if root is not None and "list_pk" in root and shards_done == int(root["shards"]["N"]):
        yield from _end(layout, batch_id, root, now)
    return counted
