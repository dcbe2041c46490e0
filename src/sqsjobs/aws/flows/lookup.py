"""A job by id, for producers: read it (``get``) or cancel it (``cancel``)."""

from __future__ import annotations

from ...core.lifecycle import CANCELLABLE, CANCELLED, expires_at
from ...core.models import Job
from ..wire import dynamo, transitions
from ..wire.items import is_record, payload_text, readable
from ..wire.layout import Layout
from ..wire.protocol import ConditionFailed, Flow
from .bodies import get_body


def get(layout: Layout, job_id: str, now: float) -> Flow[Job | None]:
    """A consistent read; an expired record is absent whether or not TTL deleted it."""
    reply = yield dynamo.get(layout.table, job_id)
    item = reply.get("Item")
    if item is None or not is_record(item):
        return None
    stored = readable(item, "GetItem")
    if stored.expired(now):
        return None
    if stored.needs_payload and stored.body_pk:  # a long payload lives in its body item
        body = yield get_body(layout.table, stored.body_pk)
        if "Item" in body:
            stored = stored.with_payload(payload_text(body["Item"]))
    return stored.job


def cancel(layout: Layout, job_id: str, now: float) -> Flow[bool]:
    """Mark it cancelled; its message is deleted when next received (no SQS call here).

    From record format 3 on the write moves the job's index entry, which needs its queue:
    the record is read first (a job's queue never changes), and a job that is not there
    or no longer waiting is refused without a write.
    """
    expiry = expires_at(CANCELLED, now, layout.retention, layout.dead_retention)
    assert expiry is not None
    queue = None
    if layout.indexed.moves:
        reply = yield dynamo.get(layout.table, job_id)
        item = reply.get("Item")
        if item is None or not is_record(item):
            return False
        stored = readable(item, "GetItem")
        if stored.expired(now) or stored.job.status not in CANCELLABLE:
            return False
        queue = stored.job.queue
    try:
        yield transitions.cancel(layout.indexed, job_id, now, expiry, queue=queue)
    except ConditionFailed:
        return False
    return True
