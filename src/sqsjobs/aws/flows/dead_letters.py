"""Dead-letter queues: read what they hold without removing it, and record dead
what the redrive policy moved there.

A job queue's DLQ holds two kinds of message (SPEC §3):

- copies the store sent when a job died (a fatal failure, the last attempt, a lease that
  expired on it): the record already says ``dead``;
- originals the queue's redrive policy moved after ``maxReceiveCount`` receives, because
  the runs kept dying before recording anything (out of memory, say). Their record still
  says ``running``, and once its lease is over no run owns it: ``inspect`` records it
  ``dead`` then and there. A waiting record, or one under a live lease, is left alone:
  its message may be a stray duplicate, and if it was the only one, the reconciler's
  stale pass (or a redrive) sends it back.

Only a message that really was redriven may get a job recorded dead, and only a job of
this DLQ's own queue: anyone allowed to send to a job queue can write a body naming any
job (keyed and cron ids are predictable), and a worker moves a message naming another
queue's job to its DLQ as misrouted. So a message counts as redriven only when it is not
one of the store's own copies (``Message.copied``) and SQS has received it at least
``maxReceiveCount`` times; a record of another queue is not this DLQ's to judge, read or
show (``Inspected.stored`` is ``None``, as for a missing record).

``inspect`` is the one place that rule lives; the reconciler, ``dead_letters`` and the
redrive all call it. ``peek`` looks at a DLQ and leaves it as it was::

    ReceiveMessage (hidden PEEK_VISIBILITY s) ─► GetItem per job ─► UpdateItem per abandoned
         └─ again, until empty or ``limit`` ─► ChangeMessageVisibilityBatch(0) for them all

Every receive counts in the message's ``ApproximateReceiveCount``; a DLQ has no redrive
policy of its own, so peeking never moves anything.

``name`` narrows a listing (and a redrive) to one handler's jobs: every message is still
received and inspected, since only the record says whose job it is, but only matching
ones count toward ``limit``; the rest are made visible again with the others.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...core import history
from ...core.lifecycle import DEAD, RUNNING, lease_over, retention_end
from ...core.reports import DeadLetter
from ...core.times import utc
from ...core.validation import check_job_name, page_limit
from ..wire import dynamo, sqs, transitions
from ..wire.items import Attributes, Stored, is_record, stored_from_item
from ..wire.layout import Layout
from ..wire.protocol import AwsError, ConditionFailed, Flow, Parallel
from ..wire.sqs import MalformedMessage, Message
from . import endings
from .bodies import read_bodies
from .messages import hand_back, receive
from .takeover import lease_end_entry

PEEK_VISIBILITY = 30  # hidden long enough not to be seen twice in one pass, no longer
OPERATOR_WAIT = 1  # a long poll asks every SQS server, so "empty" means empty


@dataclass(frozen=True)
class Inspected:
    """One DLQ message, the job id its body names and that job's record as it now stands."""

    message: Message
    job_id: str | None  # None: the body is not a delivery token for this queue
    stored: Stored | None  # None: no record, or one past its retention
    reconciled: bool = False  # this inspection recorded the job dead (moved by redrive policy)


def dead_letters(
    layout: Layout, queues: Sequence[str], now: float, limit: int, name: str | None = None
) -> Flow[list[DeadLetter]]:
    """Up to ``limit`` (1..1000) DLQ messages of ``queues``, in queue order; none removed.

    With ``name``, only messages whose job is that handler's (a live record says so).
    """
    limit = page_limit(limit)
    if name is not None:
        check_job_name(name)
    letters: list[DeadLetter] = []
    for queue in queues:
        if len(letters) >= limit:
            break
        left = limit - len(letters)
        found = yield from peek(layout, queue, now, left, OPERATOR_WAIT, named_by(name))
        letters += [_letter(queue, item) for item in found]
    return letters


def named_by(name: str | None) -> Callable[[Inspected], bool]:
    """Whether a DLQ message is one of handler ``name``'s jobs (every message, for None)."""
    if name is None:
        return lambda item: True
    return lambda item: item.stored is not None and item.stored.job.name == name


def _letter(queue: str, item: Inspected) -> DeadLetter:
    message = item.message
    return DeadLetter(
        queue=queue,
        message_id=message.message_id,
        job_id=item.job_id,
        job=None if item.stored is None else item.stored.job,
        receive_count=message.receive_count,
        sent_at=utc(message.sent_at),
    )


def peek(
    layout: Layout,
    queue: str,
    now: float,
    limit: int,
    wait: int,
    wanted: Callable[[Inspected], bool] | None = None,
) -> Flow[list[Inspected]]:
    """Up to ``limit`` ``wanted`` messages (all, if None) of ``queue``'s DLQ, inspected,
    then made visible again (all those received, wanted or not)."""
    url = layout.info(queue).dead_letter_url
    if url is None:
        return []
    found: list[Inspected] = []
    seen: dict[str, Message] = {}
    while len(found) < limit:
        size = min(sqs.MAX_BATCH, limit - len(found))
        messages = yield from receive_unseen(url, size, wait, seen)
        if not messages:
            break
        inspected = yield from inspect(layout, queue, messages, now)
        found += [i for i in inspected if wanted is None or wanted(i)][: limit - len(found)]
    yield from hand_back(url, list(seen.values()))
    return found


def receive_unseen(url: str, size: int, wait: int, seen: dict[str, Message]) -> Flow[list[Message]]:
    """The next DLQ messages this pass has not seen yet (none: it has seen them all).

    A pass that outlasts ``PEEK_VISIBILITY`` meets its first messages again; they are
    not handled twice, only remembered by their latest receipt handle (in ``seen``,
    by message id), which is the one that can make them visible again at the end.
    """
    messages = yield from receive(url, size, wait, PEEK_VISIBILITY)
    fresh = [message for message in messages if message.message_id not in seen]
    seen.update((message.message_id, message) for message in messages)
    return fresh


def inspect(
    layout: Layout, queue: str, messages: Sequence[Message], now: float
) -> Flow[list[Inspected]]:
    """Read the records ``messages`` name (at once); record the abandoned ones dead."""
    named = [(message, named_job(message, queue)) for message in messages]
    records = yield from _read(layout.table, sorted({i for _, i in named if i is not None}), now)
    for wanted, stored in records.items():
        if stored is not None and stored.job.queue != queue:
            records[wanted] = None  # another queue's job: not this DLQ's to judge or show
    limit = layout.info(queue).max_receive_count
    redriven = {i for m, i in named if i is not None and _redriven(m, limit)}
    reconciled: set[str] = set()
    for wanted, stored in list(records.items()):
        if wanted in redriven and _abandoned(stored, now, layout.clock_skew):
            assert stored is not None
            records[wanted], recorded = yield from _dead_letter(layout, queue, stored, now)
            if recorded:
                reconciled.add(wanted)
    found = [stored for stored in records.values() if stored is not None]
    for stored in (yield from read_bodies(layout.table, found)):
        records[stored.job.id] = stored
    return [
        Inspected(
            message, wanted, None if wanted is None else records[wanted], wanted in reconciled
        )
        for message, wanted in named
    ]


def named_job(message: Message, queue: str) -> str | None:
    """The job id a DLQ message of ``queue`` names; None if it is no delivery token."""
    try:
        return sqs.parse_body(message.body, queue).job_id
    except MalformedMessage:
        return None


def live(item: Attributes | None, now: float) -> Stored | None:
    """The record in ``item``, unless there is none or its retention has ended."""
    stored = None if item is None or not is_record(item) else stored_from_item(item)
    return None if stored is None or stored.past_retention(now) else stored


def _redriven(message: Message, max_receive_count: int | None) -> bool:
    """Whether the redrive policy moved ``message`` here (rather than the store copying it).

    SQS keeps a message's receive count when it moves it, so a redriven one has been
    received at least ``maxReceiveCount`` times; a copy starts again at one.
    """
    if message.copied:
        return False
    return max_receive_count is None or message.receive_count >= max_receive_count


def _abandoned(stored: Stored | None, now: float, skew: float) -> bool:
    """Running with its lease over: ``conditions.ABANDONED``, judged before writing."""
    if stored is None or stored.job.status is not RUNNING:
        return False
    return lease_over(stored.lease_until, now, skew)


def _read(table: str, job_ids: Sequence[str], now: float) -> Flow[dict[str, Stored | None]]:
    """Consistent reads, sent at once (``GetItem``: the workers' IAM policy allows it)."""
    if not job_ids:
        return {}
    replies = yield Parallel(tuple(dynamo.get(table, job_id) for job_id in job_ids))
    records: dict[str, Stored | None] = {}
    for job_id, reply in zip(job_ids, replies, strict=True):
        if isinstance(reply, AwsError):
            raise reply
        records[job_id] = live(reply.get("Item"), now)
    return records


def _dead_letter(
    layout: Layout, queue: str, stored: Stored, now: float
) -> Flow[tuple[Stored | None, bool]]:
    """Record an abandoned job dead (its lease ran out: an entry in its history says so);
    the record as it then is, and whether this did it."""
    expiry = retention_end(DEAD, now, layout.retention, layout.dead_retention)
    assert expiry is not None
    error = _redriven_error(layout, queue)
    noted = lease_end_entry(stored.job, now, history.DEAD, error)
    job = (stored.job.id, queue)
    call = transitions.abandoned_dead(
        layout.indexed, job, error, now, layout.clock_skew, expiry, noted
    )
    try:
        reply = yield call
    except ConditionFailed as refused:  # it moved since it was read
        return live(refused.item, now), False
    with contextlib.suppress(AwsError):  # children left waiting: the next pass settles them
        yield from endings.ended(layout, reply["Attributes"], now)
    return stored_from_item(reply["Attributes"]), True


def _redriven_error(layout: Layout, queue: str) -> str:
    count = layout.info(queue).max_receive_count
    limit = "its redrive policy's maxReceiveCount" if count is None else f"maxReceiveCount {count}"
    return f"its message was moved to the dead-letter queue after {limit} receives"
