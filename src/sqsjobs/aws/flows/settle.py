"""The flows after a claim: heartbeat, complete, fail and release.

Each first makes its conditional write on the record (fenced on the claim's lease
token: a stale run is refused and changes nothing), and only then touches the message,
so SQS never acts for a run that no longer owns the job. Stale receipt handles do not
fail in SQS (nor in moto), which is why ownership is decided by the record alone::

    record write refused ──► return False, message untouched (the new owner has it)
    record written       ──► message: extend / delete (buffered) / return / to the DLQ

A retried write whose first try was applied (its response lost) is refused by its own
result; that counts as written (``_written_by_us``).

``delivery`` is the message that carried this claim, when the store knows it.

Complete, fail and release on a stop end an attempt, and their write adds its entry to
the job's history (``wire.entries``): its number, the worker and when it was claimed,
from the job as the claim returned it. A store that did not make the claim reads the
record once for them (it did already for ``fail``'s decision and for format 3's index
move); the entry then leaves out when the attempt started, since heartbeats have moved
the ``updated_at`` the claim wrote.
"""

from __future__ import annotations

import contextlib

from ...core import history
from ...core.history import attempt_entry
from ...core.lifecycle import (
    COMPLETED,
    DEAD,
    after_failure,
    after_release,
    holds_lease,
    release_ends_attempt,
    retention_end,
)
from ...core.models import Job, JobStatus, message_group
from ...core.times import epoch
from ..wire import dynamo, sqs, transitions
from ..wire.copy_marks import new_key
from ..wire.entries import Noted
from ..wire.items import Attributes, number, same_value, stored_from_item, text
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Call, ConditionFailed, Flow
from . import endings
from .bodies import keep_until
from .claim import Delivery
from .messages import MessagePlan, carry_out


def _retention_end_at(layout: Layout, status: JobStatus, now: float) -> float:
    expiry = retention_end(status, now, layout.retention, layout.dead_retention)
    assert expiry is not None, "terminal statuses always expire"
    return expiry


def _ended(
    claimed: Job, delivered: bool, now: float, outcome: str, error: str | None = None
) -> Noted:
    """The history entry of the attempt ``claimed`` (the job as its claim left it, or as
    read since: not ``delivered``) that ended at ``now`` with ``outcome``."""
    started = epoch(claimed.updated_at) if delivered else None
    run = (started, claimed.locked_by)
    return attempt_entry(now, claimed.attempts, run, outcome, error), claimed.history_count


def _written_by_us(refused: ConditionFailed, status: JobStatus, now: float) -> bool:
    """Whether a write after a claim was refused by itself.

    botocore retries a request whose response was lost; when the lost one was applied,
    the lease token it was conditional on is gone and the retry is refused. Every such
    write sets ``status`` and ``updated_at = now``: finding both in the record is finding
    our own write, an outcome the store accepted, not a lease lost to another claim.
    """
    item = refused.item
    if item is None or item.get("status") != text(status.value):
        return False
    return same_value(item.get("updated_at"), number(now))


def _write_outcome(call: Call, status: JobStatus, now: float) -> Flow[bool]:
    """Send a write after a claim; True if it (or its own lost first try) took effect."""
    try:
        yield call
    except ConditionFailed as refused:
        return _written_by_us(refused, status, now)
    return True


def _write_ending(call: Call, status: JobStatus, now: float) -> Flow[Attributes | None]:
    """Send a write that ends a job: the record after it (its own lost first try's, when
    that is what refused it), or None if it was refused."""
    try:
        reply = yield call
    except ConditionFailed as refused:
        return refused.item if _written_by_us(refused, status, now) else None
    attributes: Attributes = reply.get("Attributes", {})
    return attributes


def heartbeat(
    layout: Layout,
    delivery: Delivery | None,
    job_id: str,
    token: str,
    lease_until: float,
    now: float,
    progress: str | None = None,
) -> Flow[bool]:
    """Extend the lease; ``progress``: the run's latest as JSON text, written with it
    (here and in the outcomes below)."""
    try:
        yield dynamo.heartbeat(layout.table, job_id, token, lease_until, now, progress)
    except ConditionFailed:
        return False
    if delivery is not None:
        url = layout.url(delivery.job.queue)
        seconds = sqs.visibility_for(lease_until - now)
        # Refused past SQS's 12 h per receive: claim hides it again when it comes back.
        with contextlib.suppress(AwsError):
            yield sqs.change_visibility(url, delivery.message.receipt_handle, seconds)
    return True


def complete(
    layout: Layout,
    job_id: str,
    token: str,
    now: float,
    result: str | None,
    claimed: Job | None = None,
    progress: str | None = None,
) -> Flow[bool]:
    """Record the result; the store deletes the message (batched with other completions).

    ``claimed`` is the job as this store's claim returned it: its queue places its index
    entry (``transitions.complete``) and its attempt is the history's entry. A store that
    did not make the claim reads the record to learn them.
    """
    expiry = _retention_end_at(layout, COMPLETED, now)
    delivered = claimed is not None
    if claimed is None:
        claimed = yield from _claimed(layout, job_id, token)
        if claimed is None:
            return False  # the claim under ``token`` is over: the write would be refused
    noted: Noted = (None, 0)  # nothing before it: only counted, readers make its entry
    if claimed.history_count:
        noted = _ended(claimed, delivered, now, history.COMPLETED)
    job = (job_id, claimed.queue)
    call = transitions.complete(
        layout.indexed, job, token, now, result, expiry, noted, progress=progress
    )
    item = yield from _write_ending(call, COMPLETED, now)
    if item is None:
        return False
    yield from endings.ended(layout, item, now)  # its children: raised, the retry settles them
    return True


def fail(
    layout: Layout,
    delivery: Delivery | None,
    job_id: str,
    token: str,
    error: str,
    retry_at: float | None,
    now: float,
    progress: str | None = None,
) -> Flow[bool]:
    claimed = delivery.job if delivery is not None else (yield from _claimed(layout, job_id, token))
    if claimed is None:
        return False
    status, run_at = after_failure(claimed.attempts, claimed.max_attempts, retry_at, now)
    outcome = history.DEAD if status is DEAD else history.RETRIED
    noted = _ended(claimed, delivery is not None, now, outcome, error)
    if status is DEAD:
        run = (claimed, delivery)
        return (yield from _dead(layout, run, token, error, now, (noted, progress)))
    call = transitions.retry(
        layout.indexed, job_id, token, error, status, run_at, now, noted, progress=progress
    )
    if not (yield from _write_outcome(call, status, now)):
        return False
    yield from keep_until(layout, job_id, run_at, now)
    if delivery is not None:
        yield from _return(layout, delivery, run_at, now)
    return True


def _claimed(layout: Layout, job_id: str, token: str) -> Flow[Job | None]:
    """The job as claimed under ``token`` (its attempts decide retry or dead), read once.

    Only needed when this store did not make the claim; attempts cannot change while
    the token holds.
    """
    reply = yield dynamo.get(layout.table, job_id)
    if "Item" not in reply:
        return None
    job = stored_from_item(reply["Item"]).job
    return job if holds_lease(job.status, job.lease_token, token) else None


def _dead(
    layout: Layout,
    run: tuple[Job, Delivery | None],
    token: str,
    error: str,
    now: float,
    riders: tuple[Noted, str | None],
) -> Flow[bool]:
    """Record the job dead, then send its DLQ copy, then confirm the copy on the record.

    Until confirmed, the record keeps its list-index entry open (``transitions.COPY_DUE``):
    a crash between the writes, or a DLQ that refused the copy, leaves a dead record the
    reconciler finds among the open ones and sends the copy for. The original message is
    deleted only once its copy was accepted, so a refused copy also brings it back.
    ``run``: the job as claimed, and the message that delivered it if the store knows;
    ``riders``: the history entry and the progress (JSON text) the write carries.
    """
    job, delivery = run
    noted, progress = riders
    expiry = _retention_end_at(layout, DEAD, now)
    info = layout.info(job.queue)
    key = None if info.dead_letter_url is None else new_key()
    call = transitions.dead(
        layout.indexed,
        (job.id, job.queue),
        token,
        error,
        now,
        expiry,
        copy_key=key,
        noted=noted,
        progress=progress,
    )
    item = yield from _write_ending(call, DEAD, now)
    if item is None:
        return False
    sent = False
    if delivery is not None:
        message = delivery.message
        keys = {message.message_id: key} if key is not None else None
        moved = yield from carry_out(MessagePlan(dead_letters=[message], keys=keys), info)
        sent = bool(moved)
    elif info.dead_letter_url is not None:
        sent = yield from send_dead_letter(info.dead_letter_url, job, key)
    if key is not None and sent:
        with contextlib.suppress(AwsError):  # unconfirmed, the reconciler sends another
            yield transitions.copied(layout.indexed, (job.id, job.queue), now)
    yield from endings.ended(layout, item, now)
    return True


def send_dead_letter(url: str, job: Job, key: str | None) -> Flow[bool]:
    """Send a dead job's copy, with its death's ``key`` (``copy_marks``), to its DLQ
    (``url``); whether SQS accepted it."""
    text = sqs.body(job.id, job.queue)
    try:
        yield sqs.send(url, text, 0, message_group(job), copy=True, key=key)
    except AwsError:
        return False
    return True


def release(
    layout: Layout,
    delivery: Delivery | None,
    job_id: str,
    token: str,
    error: str,
    now: float,
    run_at: float | None = None,
    progress: str | None = None,
) -> Flow[bool]:
    """Back to queued at once, or delayed until ``run_at`` (a deferred start), the attempt
    not counted; the message comes back then (hidden until ``run_at``, not visible at once).
    A release that interrupted a run (a stop) notes its attempt in the job's history."""
    status, due_at = after_release(run_at, now)
    noted = None
    if release_ends_attempt(error, run_at):
        claimed = (
            delivery.job if delivery is not None else (yield from _claimed(layout, job_id, token))
        )
        if claimed is None:
            return False
        noted = _ended(claimed, delivery is not None, now, history.RELEASED, error)
    due = (status, due_at)
    call = transitions.release(
        layout.indexed, job_id, token, error, now, due, noted, progress=progress
    )
    if not (yield from _write_outcome(call, status, now)):
        return False
    yield from keep_until(layout, job_id, due_at, now)
    if delivery is not None:
        yield from _return(layout, delivery, due_at, now)
    return True


def _return(layout: Layout, delivery: Delivery, due_at: float, now: float) -> Flow[None]:
    info = layout.info(delivery.job.queue)
    plan = MessagePlan()
    plan.return_at(delivery.message, sqs.plan_return(delivery.message, due_at, now, info))
    yield from carry_out(plan, info)
