"""A job by id, for producers: read it (``get``) or cancel it (``cancel``)."""

from __future__ import annotations

import contextlib

from ...core import history
from ...core.history import action_entry
from ...core.lifecycle import CANCELLABLE, CANCELLED, RUNNING, retention_end
from ...core.models import Job
from ..wire import dynamo, transitions
from ..wire.items import is_record, payload_text, readable
from ..wire.layout import Layout
from ..wire.protocol import AwsError, ConditionFailed, Flow
from . import debounce, endings
from .bodies import get_body


def get(layout: Layout, job_id: str, now: float) -> Flow[Job | None]:
    """A consistent read; an expired record is absent whether or not TTL deleted it."""
    reply = yield dynamo.get(layout.table, job_id)
    item = reply.get("Item")
    if item is None or not is_record(item):
        return None
    stored = readable(item, "GetItem")
    if stored.past_retention(now):
        return None
    if debounce.pending(stored):  # a later enqueue's payload, if any, is in its slot
        return (yield from debounce.latest(layout, stored))
    if stored.needs_payload and stored.body_pk:  # a long payload lives in its body item
        body = yield get_body(layout.table, stored.body_pk)
        if "Item" in body:
            stored = stored.with_payload(payload_text(body["Item"]))
    return stored.job


def cancel(layout: Layout, job_id: str, now: float, by: str | None = None) -> Flow[bool]:
    """Mark it cancelled; its message is deleted when next received (no SQS call here).

    The record is read first (one strongly consistent read): the write adds the cancel to
    the job's history (``by``: who), which needs the record's count of entries, and from
    record format 3 on it moves the job's index entry, which needs its queue. A job that
    is not there or no longer waiting is refused without a write.
    """
    expiry = retention_end(CANCELLED, now, layout.retention, layout.dead_retention)
    assert expiry is not None
    reply = yield dynamo.get(layout.table, job_id)
    item = reply.get("Item")
    if item is None or not is_record(item):
        return False
    stored = readable(item, "GetItem")
    job = stored.job
    if stored.past_retention(now) or job.status not in CANCELLABLE:
        return False
    cut = (job.attempts, job.locked_by) if job.status is RUNNING else None
    noted = (action_entry(now, history.CANCEL, history.CANCELLED, by, cut), job.history_count)
    try:
        reply = yield transitions.cancel(
            layout.indexed, job_id, now, expiry, queue=job.queue, noted=noted
        )
    except ConditionFailed:
        return False
    with contextlib.suppress(AwsError):  # children left waiting: the reconciler settles them
        yield from endings.ended(layout, reply.get("Attributes"), now)
    with contextlib.suppress(AwsError):  # a burst ended unrun: the next enqueue is a new job
        yield from debounce.ended(layout, reply.get("Attributes"), now)
    return True
