"""Claiming: receive up to ten messages, then one conditional ``UpdateItem`` per message.

The claim write succeeds only for a record the lifecycle rules call runnable (see
``conditions.CLAIMABLE``), so two workers holding the same message (SQS delivers at least
once) cannot both run it. A refused write returns the record as it was (ALL_OLD), and
``why_refused`` decides what the message needs, without spending an attempt:

    record missing, expired or terminal ──► delete the message (but a dead job's DLQ copy
                                             that SQS moved back runs it: ``moved_back``)
    running, lease live (a duplicate)   ──► hide it until that lease ends
    running, lease over, attempts left  ──► taken over (``takeover``): claimed after all
    running, lease over, last attempt   ──► record dead, message to the DLQ
    delayed, not due (delays > 15 min)  ──► hide it until due, or re-send a fresh one
    debounced, its slot not merged      ──► merge it, or hide until due (``debounce``)
    belongs to another queue            ──► DLQ, like a malformed body
    not a record this library can read  ──► DLQ, like a malformed body (record dead if
                                             the claim was written)

Receiving and claiming are two flows so the store can let a long poll be cancelled but
shield the claim step once messages are in hand.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

from ...core.errors import MAX_ERROR_CHARS, describe_error
from ...core.lifecycle import DEAD as DEAD_STATUS
from ...core.lifecycle import (
    retention_end,
)
from ...core.models import Job
from ...core.text import safe_line
from ..wire import dynamo, sqs, transitions
from ..wire.copy_marks import new_key
from ..wire.items import UNDECODABLE, Stored, is_record, stored_from_item
from ..wire.layout import Layout
from ..wire.protocol import AwsError, ConditionFailed, Flow, Parallel, Reply
from ..wire.sqs import Hide, MalformedMessage, Message, Resend
from . import debounce
from .bodies import claim_horizon, extend_bodies, read_bodies
from .messages import MessagePlan, carry_out
from .moved_back import MovedBack, moved_back
from .refusals import Refusal, why_refused
from .takeover import record_dead_at_lease_end, take_over
from .unanswered import late, no_answer, own_claim, undo


class Delivery(NamedTuple):
    """A claimed job as it was claimed, and the message that delivered it."""

    job: Job
    message: Message
    lane: str | None = None  # the priority lane's URL it came from; None: the job's queue

    def layout(self, layout: Layout) -> Layout:
        """``layout`` as the flows that act on this delivery's message must see it."""
        return layout if self.lane is None else layout.via(self.job.queue, self.lane)

    @property
    def key(self) -> tuple[str, str]:
        assert self.job.lease_token is not None
        return (self.job.id, self.job.lease_token)


class Claimed:
    """What one claim round did: jobs leased to the caller, and what the store must log."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        # Message ids done with for good: deleted (a job that ended, or has no record) or
        # copied to the DLQ. A Lambda handler must not name them as failures.
        self.settled: set[str] = set()
        self.dead: list[Job] = []
        # Dead jobs whose message goes to the DLQ: message id -> (job id, when it died).
        self.copies_due: dict[str, tuple[str, str, float]] = {}
        self.malformed: list[tuple[Message, str]] = []
        self.unknown: list[tuple[Message, str]] = []  # job id without record
        self.errors: list[AwsError] = []
        self.unanswered: list[tuple[str, str]] = []  # (job id, token): claims with no answer
        self.undone: list[str] = []  # job ids whose unanswered claim applied late, undone now
        self.moved_back: list[MovedBack] = []  # dead jobs' messages SQS moved back from a DLQ


def claim_received(
    layout: Layout,
    queue: str,
    messages: Sequence[Message],
    worker_id: str,
    now: float,
    unanswered: Mapping[str, str] = MappingProxyType({}),
    *,
    event_source: bool = False,
) -> Flow[Claimed]:
    """Claim the jobs ``messages`` deliver; dispose of every message that needs no run.
    ``unanswered``: the tokens of earlier claim writes that got no answer, by job id.
    ``event_source``: Lambda's event source mapping received the messages, not a worker
    (``fitted_visibility``).

    Two messages for one job in the same batch (SQS delivers at least once) make one
    claim write; the other message is then judged like any duplicate.
    """
    claimed, plan = Claimed(), MessagePlan()
    firsts, extra = _sort_out(messages, queue, claimed, plan)
    leases = {job_id: uuid.uuid4().hex for _, job_id in firsts}
    skew = layout.clock_skew
    calls = tuple(
        dynamo.claim(layout.indexed, job_id, queue, worker_id, leases[job_id], now, skew)
        for _, job_id in firsts
    )
    replies = (yield Parallel(calls)) if calls else []
    outcomes = {
        job_id: own_claim(reply, leases[job_id])
        for (_, job_id), reply in zip(firsts, replies, strict=True)
    }
    outcomes |= yield from take_over(layout, queue, outcomes, leases, worker_id, now, unanswered)
    payloads = yield from _payloads(layout, outcomes, now)
    for message, job_id in firsts + extra:
        first = (message, job_id) in firsts
        reply = outcomes[job_id]
        try:
            stored = _record(reply)
            if stored is not None and stored.needs_payload and not isinstance(reply, AwsError):
                stored = payloads.get(job_id, stored)
                if stored.needs_payload:
                    raise MalformedRecord(f"its payload item {stored.body_pk} is missing")
        except MalformedRecord as bad:
            written = first and not isinstance(reply, AwsError)
            token = leases[job_id] if written else None
            job = (job_id, queue)
            yield from _malformed(layout, message, job, token, str(bad), now, claimed, plan)
            continue
        if isinstance(reply, ConditionFailed) and stored is None:
            claimed.unknown.append((message, job_id))  # deleted below; worth a log line
        elif first and isinstance(reply, ConditionFailed) and late(stored, unanswered.get(job_id)):
            yield from undo(layout, job_id, unanswered[job_id], now)
            claimed.undone.append(job_id)
            plan.hides.append((message.receipt_handle, 0))  # claimable again at once
            continue
        elif first and no_answer(reply):
            claimed.unanswered.append((job_id, leases[job_id]))
            yield from undo(layout, job_id, leases[job_id], now)
        yield from _dispose(layout, queue, message, reply, stored, now, claimed, plan, first=first)
    visibility = layout.info(queue).visibility
    plan.hides += fitted_visibility(claimed.deliveries, visibility, event_source=event_source)
    if plan:
        moved = yield from carry_out(plan, layout.info(queue))
        yield from _confirm_copies(layout, claimed, moved)
        deleted = set(plan.deletes)
        claimed.settled |= {m.message_id for m in messages if m.receipt_handle in deleted}
        claimed.settled |= {m.message_id for m in moved}
    return claimed


def fitted_visibility(
    deliveries: Sequence[Delivery], visibility: int, *, event_source: bool
) -> list[tuple[str, int]]:
    """The visibility changes that fit claimed messages to their jobs' leases.

    The messages came with the queue's visibility timeout. A worker's are fitted both
    ways, so a job whose worker crashed comes back when its lease ends. An event source
    mapping's are only ever lengthened: Lambda wants at least the function's timeout
    there, and the handler hands a job back itself by its invocation's deadline, so a
    shorter lease needs no request.
    """
    hides = []
    for delivery in deliveries:
        needed = sqs.visibility_for(delivery.job.lease)
        if needed > visibility or (needed < visibility and not event_source):
            hides.append((delivery.message.receipt_handle, needed))
    return hides


def _confirm_copies(layout: Layout, claimed: Claimed, moved: Sequence[Message]) -> Flow[None]:
    """Confirm on their records the DLQ copies of jobs this round dead-lettered."""
    due = [claimed.copies_due[m.message_id] for m in moved if m.message_id in claimed.copies_due]
    if not due:
        return
    calls = tuple(
        transitions.copied(layout.indexed, (job_id, queue), died) for job_id, queue, died in due
    )
    yield Parallel(calls)  # a refusal or failure: the reconciler sends another copy


def _payloads(
    layout: Layout, outcomes: dict[str, Reply | AwsError], now: float
) -> Flow[dict[str, Stored]]:
    """The claimed records whose payloads are in body items, with the payloads read.

    Only claims that succeeded run, so only theirs are read; a body that would not
    outlive this run (and a dead job's retention after it) is extended first, or at the
    next claim if that write fails. A read that fails after botocore's retries fails
    the round like any store error: the jobs' leases end and they run again, as after a
    worker that died holding them.
    """
    claimed: list[Stored] = []
    for reply in outcomes.values():
        if isinstance(reply, AwsError) or "body_until" not in reply["Attributes"]:
            continue  # only records that keep their payload in a body are decoded here
        try:
            stored = _record(reply)
        except MalformedRecord:
            continue  # judged again (and dead-lettered) by the caller
        if stored is not None and stored.needs_payload:
            claimed.append(stored)
    if not claimed:
        return {}
    filled = yield from read_bodies(layout.table, claimed)
    with contextlib.suppress(AwsError):
        yield from extend_bodies(layout, filled, claim_horizon(now))
    return {stored.job.id: stored for stored in filled}


def _sort_out(
    messages: Sequence[Message], queue: str, claimed: Claimed, plan: MessagePlan
) -> tuple[list[tuple[Message, str]], list[tuple[Message, str]]]:
    """The first message per job and the extra ones (with job ids); malformed to the DLQ."""
    seen: set[str] = set()
    firsts: list[tuple[Message, str]] = []
    extra: list[tuple[Message, str]] = []
    for message in messages:
        try:
            parsed = sqs.parse_body(message.body, queue)
        except MalformedMessage as bad:
            claimed.malformed.append((message, str(bad)))
            plan.dead_letters.append(message)
            continue
        (extra if parsed.job_id in seen else firsts).append((message, parsed.job_id))
        seen.add(parsed.job_id)
    return firsts, extra


class MalformedRecord(ValueError):
    """The item under a job's key is not a record this library wrote (or can read)."""


def _record(reply: Reply | AwsError) -> Stored | None:
    """The record a claim write met: as claimed, or as it was when refused (ALL_OLD).

    ``None`` when there is none, or the write failed for a reason of AWS's own. An item
    that cannot be decoded, or that the claim's update cannot apply to (DynamoDB's
    ``ValidationException``: an attribute missing or of the wrong type), is malformed.
    """
    if isinstance(reply, ConditionFailed):
        item = reply.item
    elif isinstance(reply, AwsError):
        if reply.code == "ValidationException":
            raise MalformedRecord(f"the claim cannot apply to it: {safe_line(str(reply))}")
        return None
    else:
        item = reply["Attributes"]
    if item is None or not is_record(item):
        return None
    try:
        return stored_from_item(item)
    except UNDECODABLE as error:
        raise MalformedRecord(describe_error(error)) from None  # one line, capped


def _malformed(
    layout: Layout,
    message: Message,
    job: tuple[str, str],
    token: str | None,
    reason: str,
    now: float,
    claimed: Claimed,
    plan: MessagePlan,
) -> Flow[None]:
    """A message whose job's record is malformed goes to the DLQ, like a malformed body.

    No retry can mend the record. If this claim was written (``token``), the record is
    marked dead under it too, so no later claim or reconciler pass picks it up again.
    ``job``: its id and queue.
    """
    job_id = job[0]
    claimed.malformed.append((message, f"the record of job {job_id} is malformed: {reason}"))
    plan.dead_letters.append(message)
    if token is None:
        return
    expiry = retention_end(DEAD_STATUS, now, layout.retention, layout.dead_retention)
    assert expiry is not None
    error = f"malformed record: {reason}"[:MAX_ERROR_CHARS]
    with contextlib.suppress(AwsError):  # then its lease just ends; the message is gone
        yield transitions.dead(layout.indexed, job, token, error, now, expiry)


def _dispose(
    layout: Layout,
    queue: str,
    message: Message,
    reply: Reply | AwsError,
    stored: Stored | None,
    now: float,
    claimed: Claimed,
    plan: MessagePlan,
    *,
    first: bool,
) -> Flow[None]:
    """What ``message`` needs, given the reply to its job's claim write and its record."""
    if isinstance(reply, ConditionFailed):
        yield from _refused(layout, queue, message, stored, now, claimed, plan)
    elif isinstance(reply, AwsError):
        if first:
            claimed.errors.append(reply)  # not claimed: the message returns at its visibility
    elif first:
        assert stored is not None
        job = stored.job
        claimed.deliveries.append(Delivery(job, message))
    else:  # a second message for a job this batch just claimed: back when the lease ends
        assert stored is not None
        plan.return_at(message, _after_lease(message, stored, now, layout))


def _refused(
    layout: Layout,
    queue: str,
    message: Message,
    stored: Stored | None,
    now: float,
    claimed: Claimed,
    plan: MessagePlan,
) -> Flow[None]:
    refusal = why_refused(stored, queue, now, layout.clock_skew)
    info = layout.info(queue)
    if refusal is Refusal.DELETE:
        moved = yield from moved_back(layout, queue, message, stored, now)
        if moved is not None:
            claimed.moved_back.append(moved)
        if moved is not None and moved.refused is None:
            plan.return_at(message, Resend(0))  # a fresh message runs it; then this goes
        else:
            plan.deletes.append(message.receipt_handle)
    elif refusal is Refusal.MISROUTED:
        assert stored is not None
        claimed.malformed.append((message, f"job {stored.job.id} belongs to another queue"))
        plan.dead_letters.append(message)
    elif refusal is Refusal.LEASE_ENDED:
        assert stored is not None
        key = None if info.dead_letter_url is None else new_key()
        job = yield from record_dead_at_lease_end(layout, stored.job, now, key)
        if job is not None:
            claimed.dead.append(job)
            plan.dead_letters.append(message)
            if key is not None:
                plan.keys[message.message_id] = key
            claimed.copies_due[message.message_id] = (job.id, job.queue, now)
    elif refusal in COMES_BACK:
        assert stored is not None
        plan.return_at(message, (yield from _back_when(layout, refusal, message, stored, now)))


# The refusals whose message comes back later, unclaimed: when, ``_back_when`` says.
COMES_BACK = frozenset({Refusal.LEASED, Refusal.NOT_DUE, Refusal.DEBOUNCED})


def _back_when(
    layout: Layout, refusal: Refusal, message: Message, stored: Stored, now: float
) -> Flow[Hide | Resend]:
    if refusal is Refusal.LEASED:
        return _after_lease(message, stored, now, layout)
    if refusal is Refusal.NOT_DUE:
        info = layout.info(stored.job.queue)
        return sqs.plan_return(message, stored.run_at, now, info, hop=True)
    return (yield from debounce.merged(layout, stored, message, now))


def _after_lease(message: Message, stored: Stored, now: float, layout: Layout) -> Hide | Resend:
    """Bring a duplicate back when the lease is over for a claim (at least 0.5 s from now)."""
    assert stored.lease_until is not None
    due = max(stored.lease_until + layout.clock_skew, now + 0.5)
    return sqs.plan_return(message, due, now, layout.info(stored.job.queue), hop=True)
