"""Debounced jobs on ``SqsJobStore``: a burst of enqueues with one key is one job, with
the last payload, due ``debounce`` seconds after the last enqueue (``wire.debounce``).

    enqueue ──► UpdateItem slot (payload, run_at, job id if none) ──► the first one
                only: PutItem record (naming the slot) ──► SendMessage (delayed)
    claim   ──► refused while the record names its slot ──► GetItem slot:
                  not due (a later enqueue moved it) ──► hide the message until then
                  due ──► one transaction: the slot into the record, the burst ended
                          ──► the message back at once, claimed as any other
                  another burst's by now ──► the record forgets the slot, and runs

So every enqueue but a burst's first is one conditional write and no read, and nothing
is lost to a race: an enqueue after the merge's read cancels the merge (the slot's
``v``), and one after the merge starts a new burst and a new job. ``get`` shows a
waiting job as its slot has it. A producer that died between its slot write and its
record leaves a slot naming a job with no record: its key is free again ``STRANDED``
seconds after that burst's ``run_at``.
"""

from __future__ import annotations

import contextlib
import json

from ...core.errors import JobConfigError
from ...core.lifecycle import DELAYED, QUEUED
from ...core.models import Job
from ...core.times import epoch, utc
from ...core.validation import dump_json
from ..wire import debounce
from ..wire.items import DEBOUNCE_SLOT, Attributes, Stored, text
from ..wire.layout import Layout
from ..wire.protocol import AwsError, ConditionFailed, Flow
from ..wire.sqs import Hide, Message, Resend, plan_return

MERGE_MISSED = 1  # seconds a message waits after a merge an enqueue cancelled


def join(layout: Layout, pk: str, job: Job, now: float) -> Flow[Attributes]:
    """The slot after this enqueue's write: the burst's, or a new one."""
    payload, run_at = dump_json(job.payload), epoch(job.run_at)
    for _ in range(3):  # a renew lost to another producer's: join that burst
        try:
            reply = yield debounce.bump(layout.table, pk, job.id, payload, run_at, now)
            attributes: Attributes = reply["Attributes"]
            return attributes
        except ConditionFailed as expired:  # the last burst's job started (or stranded)
            old_v = int((expired.item or {}).get("v", {"N": "0"})["N"])
        try:
            yield debounce.renew(layout.table, pk, job.id, payload, run_at, now, old_v)
            return {"job_id": text(job.id), "created_at": {"N": repr(now)}}
        except ConditionFailed:
            continue
    raise JobConfigError(  # three bursts ended under this enqueue: not a real workload
        "invalid_option", f"debounce_key {job.debounce_key!r} changed hands too fast to join"
    )


def pending(stored: Stored) -> bool:
    """A claim refused for the slot its record still names (its condition's last part)."""
    return stored.debounce_slot is not None and stored.job.status in (QUEUED, DELAYED)


def merged(layout: Layout, stored: Stored, message: Message, now: float) -> Flow[Hide | Resend]:
    """What the message of a job whose record names its slot needs: the slot merged
    (back at once, to be claimed), or hidden until the burst's latest ``run_at``."""
    pk = stored.debounce_slot
    assert pk is not None
    reply = yield debounce.read(layout.table, pk)
    slot = reply.get("Item")
    if slot is None or slot["job_id"]["S"] != stored.job.id:
        with contextlib.suppress(ConditionFailed):
            yield debounce.forget(layout.table, stored.job.id, pk)
        return Hide(0)
    due = float(slot["run_at"]["N"])
    if due > now + layout.clock_skew:
        return plan_return(message, due, now, layout.info(stored.job.queue), hop=True)
    try:
        yield debounce.merge(layout.table, pk, slot, now)
    except AwsError:  # an enqueue since the read (the slot's ``v``): judged again shortly
        return Hide(MERGE_MISSED)
    return Hide(0)


def latest(layout: Layout, stored: Stored) -> Flow[Job]:
    """The job as its burst's latest enqueue left it, for ``get``."""
    if not pending(stored):
        return stored.job
    assert stored.debounce_slot is not None
    reply = yield debounce.read(layout.table, stored.debounce_slot)
    slot = reply.get("Item")
    if slot is None or slot["job_id"]["S"] != stored.job.id:
        return stored.job
    update = {
        "payload": json.loads(slot["payload"]["S"]),
        "run_at": utc(float(slot["run_at"]["N"])),
        "updated_at": utc(float(slot["updated_at"]["N"])),
    }
    return stored.job.model_copy(update=update)


def ended(layout: Layout, item: Attributes | None, now: float) -> Flow[None]:
    """A job cancelled before it ran ends its burst: the next enqueue is a new job."""
    pk = None if item is None else item.get(DEBOUNCE_SLOT, {}).get("S")
    if item is not None and pk is not None:
        with contextlib.suppress(ConditionFailed):
            yield debounce.end(layout.table, pk, item["id"]["S"], now)
