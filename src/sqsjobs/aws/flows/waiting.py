"""Jobs that wait for other jobs (``enqueue(after=...)``) on DynamoDB and SQS.

A put with parents reads them first (one consistent ``BatchGetItem``): an id with no
live record is refused before anything is written. The child is written ``waiting``,
its ``awaiting`` set naming the parents not yet completed, and no message is sent for
it. Each of those parents then names the child among its ``children`` (``link``), unless
it has ended meanwhile, in which case the put settles that parent's part itself::

    put child (waiting) ──► link to each parent ──► parents end:
        completed  ──► cross it off the child's ``awaiting`` (``arrive``); the last one
                       releases the child: queued (or delayed), then its message
        dead / cancelled ──► cancel the child (``last_error`` names the parent), then its
                       own children, and theirs

Every step is a conditional write on one item, so a child is released once however its
parents end (the release's condition wants it waiting for nobody), and every step can be
repeated: an outcome's write retried after a failure settles its children again, and
changes nothing the first try settled. A crash between the steps leaves a child waiting
for parents that have ended: the reconciler reads the parents of children waiting longer
than its grace period and finishes the job (``settle_stranded``); a child released whose
message was lost is an ordinary stale queued record, which it re-sends.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from ...core import history
from ...core.errors import JobConfigError
from ...core.fields import may_wait_for, unknown_parent
from ...core.history import action_entry
from ...core.lifecycle import (
    CANCELLED,
    COMPLETED,
    FAILS_CHILDREN,
    WAITING,
    initial_status,
    parent_ended_error,
    retention_end,
)
from ...core.models import Job, JobStatus
from ..wire import dynamo, waiting
from ..wire.items import (
    AWAITING,
    WAITS,
    Attributes,
    Stored,
    is_record,
    job_key,
    readable,
    string_set,
)
from ..wire.layout import Layout
from ..wire.protocol import AwsError, ConditionFailed, Flow, Parallel
from .batch_get import get_items
from .new_messages import send_new

CHILDREN_MAX = 1000  # jobs that may wait for one parent: its record keeps their ids
SETTLED_MOST = 1000  # children one ending settles; the reconciler settles the rest
PARENT_GONE = "parent job {} is gone (past its retention) and cannot be waited for"


def read_parents(layout: Layout, job: Job, now: float) -> Flow[dict[str, Stored]]:
    """The live records of ``job``'s parents; refuses (``JobConfigError``, nothing written)
    an id without one, a parent that has as many children as it may keep, or any parent
    at all while the deployment still writes records its older readers read (format 2:
    they know no ``waiting`` status)."""
    if layout.record_format < WAITS:
        raise JobConfigError(
            "invalid_option",
            f"enqueue(after=...) writes records that 0.2 releases cannot read, and this store "
            f"writes record format {layout.record_format} for them (record_format / "
            f"SQSJOBS_RECORD_FORMAT): once no 0.2 release reads the table, write format "
            f"{WAITS}, the default",
        )
    items = yield from get_items(layout.table, [job_key(p) for p in job.after], consistent=True)
    found: dict[str, Stored] = {}
    for item in items:
        stored = readable(item, "BatchGetItem")
        if not stored.past_retention(now):
            found[stored.job.id] = stored
    for parent_id in job.after:
        parent = found.get(parent_id)
        if parent is None or not may_wait_for(job.tenant, parent.job.tenant):
            raise unknown_parent(parent_id)
        if len(found[parent_id].children) >= CHILDREN_MAX:
            raise JobConfigError(
                "invalid_option",
                f"Parent job {parent_id!r} has {CHILDREN_MAX} jobs waiting for it already, "
                "as many as it keeps; enqueue more from its handler instead",
            )
    return {parent_id: found[parent_id] for parent_id in job.after}


def awaited(parents: dict[str, Stored]) -> list[str]:
    """The parents a new child waits for: those not completed yet."""
    return [parent_id for parent_id, s in parents.items() if s.job.status is not COMPLETED]


def link(layout: Layout, child: Job, parent_ids: Sequence[str], now: float) -> Flow[None]:
    """Name the newly written ``child`` among each parent's children; a parent that ended
    first (the write refused with it, ``ALL_OLD``) has its part settled here."""
    calls = tuple(waiting.link(layout.table, parent_id, child.id) for parent_id in parent_ids)
    replies = yield Parallel(calls)
    for parent_id, reply in zip(parent_ids, replies, strict=True):
        if isinstance(reply, ConditionFailed):
            item = reply.item if reply.item is not None and is_record(reply.item) else None
            status = CANCELLED if item is None else readable(item, "UpdateItem").job.status
            try:
                yield from parent_ended(
                    layout, parent_id, status, [child.id], now, gone=item is None
                )
            except AwsError:
                # Refused, or not allowed: the templates' producer role may link a child
                # but not settle one. The child waits, written; the reconciler settles it
                # once its grace period has passed (``settle_stranded``).
                continue
        elif isinstance(reply, AwsError):
            raise reply  # the child waits; the reconciler links what this did not


def ended(layout: Layout, item: Attributes | None, now: float) -> Flow[None]:
    """A job's ending write returned ``item``: settle the children waiting for it."""
    if item is None or not is_record(item):
        return
    children = string_set(item, "children")
    if children:
        stored = readable(item, "UpdateItem")
        yield from parent_ended(layout, stored.job.id, stored.job.status, children, now)


def parent_ended(
    layout: Layout,
    parent_id: str,
    status: JobStatus,
    children: Sequence[str],
    now: float,
    *,
    gone: bool = False,
) -> Flow[int]:
    """Settle the ``children`` of a parent that ended ``status``, and the children of those
    it cancels in turn (a worklist, so any depth is settled); how many were settled."""
    work = deque([(parent_id, status, list(children))])
    settled = 0
    while work and settled < SETTLED_MOST:
        parent, ending, waiting_ones = work.popleft()
        if ending is COMPLETED:
            settled += yield from _arrive(layout, parent, waiting_ones, now)
            continue
        if ending not in FAILS_CHILDREN:
            continue  # it runs again (a dead job retried): its children wait on
        for child_id in waiting_ones:
            error = PARENT_GONE.format(parent) if gone else parent_ended_error(parent, ending)
            item = yield from cancel_child(layout, child_id, parent, error, now)
            if item is not None:
                settled += 1
                grandchildren = string_set(item, "children")
                if grandchildren:
                    work.append((child_id, CANCELLED, list(grandchildren)))
    return settled


def _arrive(layout: Layout, parent_id: str, children: Sequence[str], now: float) -> Flow[int]:
    calls = tuple(waiting.arrive(layout.table, child_id, parent_id) for child_id in children)
    replies = yield Parallel(calls)
    released = 0
    for reply in replies:
        if isinstance(reply, ConditionFailed):
            # Crossed off already, or the child moved on. Crossed off by a try whose
            # release never followed (a crash between the two), the child waits for
            # nobody: release it now.
            item = reply.item
        elif isinstance(reply, AwsError):
            raise reply  # the outcome's retry, or the reconciler, settles it again
        else:
            item = reply["Attributes"]
        if item is not None and _waits_for_nobody(item):
            released += yield from release(layout, readable(item, "UpdateItem"), now)
    return released


def _waits_for_nobody(item: Attributes) -> bool:
    return is_record(item) and item["status"] == {"S": WAITING.value} and AWAITING not in item


def release(layout: Layout, child: Stored, now: float) -> Flow[int]:
    """Queue a child that waits for nobody any more (or delay it until its ``run_at``),
    then send its message; 0 if someone else released it first."""
    status = initial_status(child.run_at, now)
    try:
        yield waiting.release(layout.indexed, child.job.id, status, now)
    except ConditionFailed:
        return 0
    yield from send_new(layout, child.job.model_copy(update={"status": status}), now)
    return 1


def cancel_child(
    layout: Layout, child_id: str, parent_id: str, error: str, now: float
) -> Flow[Attributes | None]:
    """Cancel a waiting child for its parent's sake; its record after, or None if it was
    not waiting any more."""
    reply = yield dynamo.get(layout.table, child_id)
    item = reply.get("Item")
    if item is None or not is_record(item):
        return None
    stored = readable(item, "GetItem")
    if stored.job.status is not WAITING:
        return None
    expiry = retention_end(CANCELLED, now, layout.retention, layout.dead_retention)
    assert expiry is not None
    entry = action_entry(now, history.CANCEL, history.CANCELLED, f"parent {parent_id}")
    call = waiting.cancel_child(
        layout.indexed,
        (child_id, stored.job.queue),
        error,
        now,
        expiry,
        (entry, stored.job.history_count),
    )
    try:
        written = yield call
    except ConditionFailed:
        return None
    attributes: Attributes = written["Attributes"]
    return attributes


def settle_stranded(
    layout: Layout, found: Sequence[Stored], cutoff: float, now: float
) -> Flow[int]:
    """The reconciler's part: children waiting since before ``cutoff`` for parents that
    have ended (a crash between the steps above) are settled; how many."""
    settled = 0
    for child in found:
        if child.job.status is not WAITING or child.updated_at >= cutoff:
            continue
        if child.job.batch_callback is not None:
            continue  # it waits for its batch: ``batches.settle_open`` sees to it
        parents = child.awaiting or tuple(child.job.after)
        items = yield from get_items(layout.table, [job_key(p) for p in parents], consistent=True)
        live = {s.job.id: s for s in (readable(i, "BatchGetItem") for i in items)}
        for parent_id in parents:
            parent = live.get(parent_id)
            if parent is None or parent.past_retention(now):
                settled += yield from parent_ended(
                    layout, parent_id, CANCELLED, [child.job.id], now, gone=True
                )
            elif parent.job.status is COMPLETED or parent.job.status in FAILS_CHILDREN:
                settled += yield from parent_ended(
                    layout, parent_id, parent.job.status, [child.job.id], now
                )
            elif child.job.id not in parent.children:
                yield from link(layout, child.job, [parent_id], now)
    return settled
