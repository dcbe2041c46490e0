"""Operator flows that run dead jobs again: ``retry`` one by id, ``redrive`` a whole DLQ.

Both revive the record first (one conditional ``UpdateItem``: dead and within its
retention → queued now, attempts reset, ``last_error`` kept), then send its message.
A crash between the two leaves a queued record without a message, which the
reconciler's stale pass re-sends; the reverse order could run a job its record still
calls dead.

A redrive takes DLQ messages ten at a time and never deletes one before its job is
safely back in the job queue::

    ReceiveMessage ─► GetItem per job ─► UpdateItem per dead job ─► SendMessageBatch (job queue)
                                                                   └─► DeleteMessageBatch (DLQ)

Per message, as its record stands (``redrive_action``):

    dead                              ──► revive, send, delete
    queued, delayed or running        ──► send (it may be the job's only message), delete
    completed, cancelled, missing,
    or a job this batch already sent  ──► delete (discarded)
    a job an earlier batch sent:
        dead again                    ──► leave in the DLQ (skipped): it died again
        not dead                      ──► delete (discarded)
    payload gone (its body expired)   ──► leave in the DLQ (skipped)
    body not a token for this queue   ──► leave in the DLQ (skipped)

A job sent back by an earlier batch of the same pass and found dead again (a poison
job dies within milliseconds) is not revived a second time, and its message is kept:
it may be the copy of that new death, which the DLQ must keep (its depth alarms,
``dlq list`` shows it). Every message of a later batch was received after that
revive and its record read after the receive, so a record that is not dead proves the
copy older than the revive; one of this batch was received before it, so it is old.

A running record whose lease is over was recorded dead by ``inspect`` just before, as
SPEC §3 asks of messages the redrive policy moved, and is revived like any dead one.

A redrive given a handler ``name`` acts only on messages whose record is that handler's
job: every other message (another handler's, a missing record, a foreign body) is
passed over, untouched and visible again as soon as the queue's pass ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from ...core import history
from ...core.lifecycle import DEAD, TERMINAL
from ...core.models import Job, message_group
from ...core.reports import RedriveProgress, RedriveReport
from ...core.times import epoch
from ...core.validation import check_job_name, integer
from ..wire import dynamo, sqs, transitions
from ..wire.items import stored_from_item
from ..wire.layout import Layout
from ..wire.protocol import AwsError, ConditionFailed, Flow
from ..wire.sqs import Message
from .bodies import claim_horizon, extend_bodies
from .dead_letters import (
    OPERATOR_WAIT,
    Inspected,
    inspect,
    live,
    named_by,
    named_job,
    receive_unseen,
)
from .messages import hand_back, send_copies
from .revival import keep_body, revival


def retry(layout: Layout, job_id: str, now: float, by: str | None = None) -> Flow[bool]:
    """Revive a dead job and send its message; False if unknown, expired or not dead.

    The record is read first: a dead job whose payload went with its body item (kept
    past its TTL with no claim or reconciler to extend it) could only die again, so it
    is refused rather than revived. The revive adds the retry to the job's history
    (``by``: who asked).

    Raises:
        JobConfigError: the job is dead but its queue has no SQS queue in this store, or
            its payload is gone; nothing was written.
    """
    reply = yield dynamo.get(layout.table, job_id)
    stored = live(reply.get("Item"), now)
    if stored is None or stored.job.status is not DEAD:
        return False
    layout.url(stored.job.queue)  # a queue this store does not serve: say which one
    if stored.body_pk is not None:
        yield from keep_body(layout, stored, now)
    url = layout.info(stored.job.queue).dead_letter_url
    copies = (yield from hold_copies(url, stored.job.queue, job_id)) if url else []
    try:
        reply = yield transitions.revive(
            layout.indexed,
            (job_id, stored.job.queue),
            sorted(layout.queue_urls),
            now,
            revival(stored.job, now, history.RETRY, by),
        )
    except ConditionFailed:  # it changed since it was read (revived by someone else, expired)
        if url:
            yield from hand_back(url, copies)
        return False
    job = stored_from_item(reply["Attributes"]).job
    yield sqs.send(layout.url(job.queue), sqs.body(job.id, job.queue), 0, message_group(job))
    if url:
        for handles in sqs.chunks([copy.receipt_handle for copy in copies]):
            with contextlib.suppress(AwsError):  # a copy left behind: a redrive discards it
                yield sqs.delete_batch(url, handles)
    return True


SWEEP_LIMIT = 1_000  # DLQ messages a retry looks through for the job's copies


def hold_copies(url: str, queue: str, job_id: str) -> Flow[list[Message]]:
    """Find ``job_id``'s copies in a DLQ (``url``) and keep them hidden; hand the rest back.

    A job that runs again no longer belongs in its DLQ: left there, ``dlq list`` would
    show it (twice, if it died again) and ``stats`` would count it. SQS deletes only by
    receipt handle, so the DLQ is looked through (up to ``SWEEP_LIMIT`` messages; a copy
    beyond that is discarded by the next redrive, which finds the job no longer dead).

    This runs *before* the job is revived: every copy found was there before it ran
    again, so deleting them once it is revived never takes the copy of a death that
    came after (a poison job dies again within milliseconds). A copy that arrives
    later is the job's rightful copy and stays. A failing receive ends the search:
    the retry goes ahead with the copies found so far.
    """
    seen: dict[str, Message] = {}
    copies: dict[str, None] = {}  # message ids, in the order received
    with contextlib.suppress(AwsError):
        while len(seen) < SWEEP_LIMIT:
            size = min(sqs.MAX_BATCH, SWEEP_LIMIT - len(seen))
            messages = yield from receive_unseen(url, size, OPERATOR_WAIT, seen)
            if not messages:
                break
            found = (m.message_id for m in messages if named_job(m, queue) == job_id)
            copies |= dict.fromkeys(found)
    with contextlib.suppress(AwsError):  # the others come back at their visibility anyway
        yield from hand_back(url, [m for i, m in seen.items() if i not in copies])
    return [seen[message_id] for message_id in copies]


Progress = RedriveProgress
FINISHED = TERMINAL - {DEAD}  # nothing left to run: their DLQ messages can go


class RedriveAction(Enum):
    """What a redrive does with one DLQ message."""

    REVIVE = "revive"
    SEND = "send"
    DISCARD = "discard"
    SKIP = "skip"


@dataclass
class _Run:
    """A redrive in progress: counts so far, and the jobs already sent back."""

    limit: int | None
    on_progress: Progress | None
    wanted: Callable[[Inspected], bool]
    by: str | None = None  # who asked, for the history of each job revived
    redriven: int = 0
    discarded: int = 0
    skipped: int = 0
    passed_over: int = 0
    sent: set[str] = field(default_factory=set)  # sent back by an earlier batch

    @property
    def report(self) -> RedriveReport:
        return RedriveReport(self.redriven, self.discarded, self.skipped, self.passed_over)

    def room(self) -> int:
        """How many messages the next receive may take."""
        left = sqs.MAX_BATCH if self.limit is None else self.limit - self.report.total
        return min(sqs.MAX_BATCH, left)

    def add(self, redriven: int, discarded: int, skipped: int, passed_over: int) -> None:
        self.redriven += redriven
        self.discarded += discarded
        self.skipped += skipped
        self.passed_over += passed_over
        if self.on_progress is not None:
            self.on_progress(self.report)


def redrive(
    layout: Layout,
    queues: Sequence[str],
    now: float,
    limit: int | None,
    on_progress: Progress | None = None,
    name: str | None = None,
    by: str | None = None,
) -> Flow[RedriveReport]:
    """Send the jobs of up to ``limit`` DLQ messages (all if ``None``) back to their queues;
    with ``name``, only messages of that handler's jobs (``limit`` counts only those);
    ``by``: who asked, noted in the history of each job revived."""
    if limit is not None:
        integer(limit, "limit", minimum=1, code="invalid_option")
    if name is not None:
        check_job_name(name)
    run = _Run(limit, on_progress, named_by(name), by)
    for queue in queues:
        url = layout.info(queue).dead_letter_url
        if url is None:
            continue
        seen: dict[str, Message] = {}
        left: list[str] = []
        while run.room() > 0:
            messages = yield from receive_unseen(url, run.room(), OPERATOR_WAIT, seen)
            if not messages:
                break
            found = yield from inspect(layout, queue, messages, now)
            left += yield from _batch(layout, queue, url, found, run, now)
        # What was skipped is visible again at once (by its latest receipt handle).
        yield from hand_back(url, [seen[message_id] for message_id in left])
    return run.report


def redrive_action(
    job_id: str | None,
    stored_job: Job | None,
    queue: str,
    sent: set[str],
    sent_now: frozenset[str] | set[str] = frozenset(),
) -> RedriveAction:
    """What a DLQ message needs, given the record its body names (``None``: no record).

    ``sent`` are the jobs earlier batches of this pass sent back, ``sent_now`` those of
    this message's own batch (see the module docstring).
    """
    if job_id is None:
        return RedriveAction.SKIP
    if stored_job is None or stored_job.status in FINISHED or job_id in sent_now:
        return RedriveAction.DISCARD
    if job_id in sent:
        return RedriveAction.SKIP if stored_job.status is DEAD else RedriveAction.DISCARD
    if stored_job.queue != queue:
        return RedriveAction.SKIP  # its record belongs elsewhere: not this redrive's to send
    return RedriveAction.REVIVE if stored_job.status is DEAD else RedriveAction.SEND


def _batch(
    layout: Layout, queue: str, url: str, found: Sequence[Inspected], run: _Run, now: float
) -> Flow[list[str]]:
    """Settle one received batch; the ids of the messages left in the DLQ."""
    sends: list[tuple[Message, int]] = []
    deletes: list[str] = []
    left: list[Message] = []
    passed = [item.message for item in found if not run.wanted(item)]
    sent_now: set[str] = set()
    for item in found:
        if not run.wanted(item):
            continue
        action, job = yield from _decide(layout, queue, item, (run.sent, sent_now), now, run.by)
        if action is RedriveAction.SEND and job is not None:
            sends.append((item.message, sqs.send_delay(epoch(job.run_at), now)))
            sent_now.add(job.id)
        elif action is RedriveAction.DISCARD:
            deletes.append(item.message.receipt_handle)
        else:
            left.append(item.message)
    back = yield from send_copies(layout.url(queue), sends)
    run.sent |= sent_now
    left += [message for message, _ in sends if message not in back]
    for handles in sqs.chunks(deletes + [message.receipt_handle for message in back]):
        # A copy left in the DLQ is sent again or discarded by a later redrive.
        with contextlib.suppress(AwsError):
            yield sqs.delete_batch(url, handles)
    run.add(len(back), len(deletes), len(left), len(passed))
    return [message.message_id for message in left + passed]


def _decide(
    layout: Layout,
    queue: str,
    item: Inspected,
    sent: tuple[set[str], set[str]],
    now: float,
    by: str | None = None,
) -> Flow[tuple[RedriveAction, Job | None]]:
    """The action for ``item``, reviving a dead job: then its message is to be sent."""
    job = None if item.stored is None else item.stored.job
    action = redrive_action(item.job_id, job, queue, *sent)
    if action is RedriveAction.REVIVE and item.stored is not None and item.stored.needs_payload:
        return RedriveAction.SKIP, job  # its payload is gone: it could only die again
    if action is not RedriveAction.REVIVE:
        return action, job
    assert item.job_id is not None and job is not None
    entry = revival(job, now, history.REDRIVE, by)
    try:
        reply = yield transitions.revive(layout.indexed, (item.job_id, queue), [queue], now, entry)
    except ConditionFailed as refused:  # it changed since it was read: redrive_action it as it is
        stored = live(refused.item, now)
        job = None if stored is None else stored.job
        again = redrive_action(item.job_id, job, queue, *sent)
        return (RedriveAction.SKIP if again is RedriveAction.REVIVE else again), job
    revived = stored_from_item(reply["Attributes"])
    with contextlib.suppress(AwsError):  # the next claim extends it otherwise
        yield from extend_bodies(layout, [revived], claim_horizon(now))
    return RedriveAction.SEND, revived.job
