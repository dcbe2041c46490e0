"""Leases found over by a claim: taken over (attempts left) or ended dead, and noted.

A claim's write takes a waiting job. A running job whose lease ran out (its worker died,
or lost the table for longer than the lease) refuses it, and the refusal returns the
record as it was (ALL_OLD): whose lease ran out, on which attempt, and how long the
job's history is. With that, one more conditional write takes the job over, fenced on
the token that ran out, and adds the entry that says so (``history.EXPIRED``, outcome
``retry``); on its final attempt the job is recorded dead instead (``record_dead_at_lease_end``),
with an entry too. A lease runs out rarely, so the second write costs little: a claim
of a waiting job is the one write it always was.

Nothing here runs when the record is running under a claim of this store's that got no
answer (``unanswered``): that claim never ran anything, and ``unanswered.late``
releases it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from ...core import history
from ...core.history import HistoryEntry, attempt_entry
from ...core.lifecycle import DEAD as DEAD_STATUS
from ...core.lifecycle import (
    LEASE_EXPIRED_ERROR,
    RUNNING,
    ClaimDecision,
    claim_decision,
    retention_end,
)
from ...core.models import Job
from ..wire import dynamo, transitions
from ..wire.entries import Noted
from ..wire.items import UNDECODABLE, Stored, is_record, stored_from_item
from ..wire.layout import Layout
from ..wire.protocol import AwsError, ConditionFailed, Flow, Parallel, Reply
from . import endings
from .unanswered import own_claim


def lease_end_entry(job: Job, now: float, outcome: str, error: str | None = None) -> Noted:
    """The entry for ``job``'s attempt whose lease a claim found over at ``now``.

    Only the record tells of it, and the record no longer says when that attempt
    started (its heartbeats moved ``updated_at``), so the entry leaves it out.
    """
    run = (None, job.locked_by)
    entry: HistoryEntry = attempt_entry(
        now, job.attempts, run, outcome, error, kind=history.EXPIRED
    )
    return entry, job.history_count


def take_over(
    layout: Layout,
    queue: str,
    outcomes: Mapping[str, Reply | AwsError],
    leases: Mapping[str, str],
    worker_id: str,
    now: float,
    unanswered: Mapping[str, str],
) -> Flow[dict[str, Reply | AwsError]]:
    """Claim again, as take-overs, the jobs whose claims a lapsed lease refused.

    ``outcomes`` are the claim writes' replies by job id, ``leases`` their tokens; the
    replies of the take-overs, by job id, replace theirs (a claim's reply in form: the
    record as claimed, or as it was when refused).
    """
    lapsed = {
        job_id: stored
        for job_id, reply in outcomes.items()
        if isinstance(reply, ConditionFailed)
        and (stored := _lapsed(reply.item, queue, layout.clock_skew, now)) is not None
        and stored.job.lease_token != unanswered.get(job_id)
    }
    if not lapsed:
        return {}
    calls = []
    for job_id, stored in lapsed.items():
        job = stored.job
        assert job.lease_token is not None
        over = (job.lease_token, lease_end_entry(job, now, history.RETRIED))
        calls.append(
            dynamo.claim(
                layout.indexed,
                job_id,
                queue,
                worker_id,
                leases[job_id],
                now,
                layout.clock_skew,
                over,
            )
        )
    replies = yield Parallel(tuple(calls))
    return {
        job_id: own_claim(reply, leases[job_id])
        for job_id, reply in zip(lapsed, replies, strict=True)
    }


def _lapsed(item: object, queue: str, skew: float, now: float) -> Stored | None:
    """The record in a refusal if it is a job of ``queue`` running under a lease that ran
    out, with attempts left: one a take-over claims."""
    if not isinstance(item, dict) or not is_record(item):
        return None
    try:
        stored = stored_from_item(item)
    except UNDECODABLE:
        return None  # judged, and dead-lettered, as malformed by the claim
    job = stored.job
    if job.status is not RUNNING or job.queue != queue or job.lease_token is None:
        return None
    decision = claim_decision(
        job.status, stored.run_at, stored.lease_until, job.attempts, job.max_attempts, now, skew
    )
    return stored if decision is ClaimDecision.RUN and not stored.past_retention(now) else None


def record_dead_at_lease_end(
    layout: Layout, job: Job, now: float, key: str | None
) -> Flow[Job | None]:
    """Dead-letter a job whose lease ended on its final attempt; None if someone else acted.

    ``key``: its message goes to the DLQ next, with this key (``copy_marks``), confirmed
    on the record once sent.
    """
    expiry = retention_end(DEAD_STATUS, now, layout.retention, layout.dead_retention)
    assert job.lease_token is not None and expiry is not None
    token, skew = job.lease_token, layout.clock_skew
    call = transitions.dead_at_lease_end(
        layout.indexed,
        (job.id, job.queue),
        token,
        LEASE_EXPIRED_ERROR,
        now,
        skew,
        expiry,
        copy_key=key,
        noted=lease_end_entry(job, now, history.DEAD, LEASE_EXPIRED_ERROR),
    )
    try:
        reply = yield call
    except ConditionFailed:
        return None
    with contextlib.suppress(AwsError):  # children left waiting: the reconciler settles them
        yield from endings.ended(layout, reply["Attributes"], now)
    return stored_from_item(reply["Attributes"]).job
