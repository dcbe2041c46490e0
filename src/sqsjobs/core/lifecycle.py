"""The job status rules, in one place: which status may become which, and when.

    enqueue(after=parents) ──► waiting ──► queued (or delayed): its last parent completed
                                  └──────► cancelled: a parent ended dead or cancelled
    enqueue ──► queued ◄──────────── release / fail(retry_at <= now)
         │        │  ▲
         ▼        │  └── claim applies nothing to queued; delayed stays delayed until claimed
      delayed ────┤
                  ▼ claim (due; or running with an expired lease, attempts + 1, new token)
               running ──► completed   complete (token must match)
                  │    ──► delayed     fail with retry_at > now
                  │    ──► dead        fail with no retry_at, or attempts >= max_attempts,
                  │                    or lease expired on the final attempt (at the next claim)
     queued, delayed, running ──► cancelled

Every function here is pure: it takes ``now`` (epoch seconds) and plain fields and returns
a decision. The memory store applies them to its records; the DynamoDB builders derive
their condition expressions from the same sets, and one conformance suite keeps the two
in agreement.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from .models import Job, JobStatus

QUEUED, DELAYED, RUNNING = JobStatus.QUEUED, JobStatus.DELAYED, JobStatus.RUNNING
COMPLETED, DEAD, CANCELLED = JobStatus.COMPLETED, JobStatus.DEAD, JobStatus.CANCELLED
WAITING = JobStatus.WAITING

TERMINAL: frozenset[JobStatus] = frozenset({COMPLETED, DEAD, CANCELLED})
# Waiting for a claim (not for parents): what a message on its queue stands for.
CLAIMABLE_LATER: frozenset[JobStatus] = frozenset({QUEUED, DELAYED})
CANCELLABLE: frozenset[JobStatus] = frozenset({WAITING, QUEUED, DELAYED, RUNNING})
# A message for a job in one of these is deleted on arrival: it ended, or it waits for
# its parents, whose last one sends its message when it releases it.
NEEDS_NO_MESSAGE: frozenset[JobStatus] = TERMINAL | {WAITING}
# A parent that ends so takes its waiting children with it (``parent_ended_error``).
FAILS_CHILDREN: frozenset[JobStatus] = frozenset({DEAD, CANCELLED})

LEASE_EXPIRED_ERROR = "lease expired after final attempt"
STOPPING_ERROR = "worker is stopping"
CUTOFF_ERROR = "invocation deadline reached"  # a Lambda invocation ended before its run
# Why a run that had started was released: its attempt is in the job's history. Other
# releases (a claim no run took, a start a limit deferred) ran nothing.
INTERRUPTED = frozenset({STOPPING_ERROR, CUTOFF_ERROR})


class ClaimDecision(Enum):
    RUN = "run"  # lease it to the claimer, attempts + 1
    DEAD = "dead"  # its lease expired on the final attempt: dead-letter it, claim the next
    SKIP = "skip"  # not claimable now


class ClaimRule(Enum):
    """May this job run now? The claim's table, one row per case a record can be in.

    Both stores decide every claim by it (``claim_decision``); the DynamoDB condition of
    the claim write is its RUN rows in one expression (``aws.wire.conditions``), and the
    conformance suite has one test per row on every store.
    """

    WAITING_FOR_PARENTS = ("waiting for its parents", ClaimDecision.SKIP)
    QUEUED = ("queued", ClaimDecision.RUN)
    DELAYED_DUE = ("delayed, its run_at reached", ClaimDecision.RUN)
    DELAYED_NOT_DUE = ("delayed, its run_at ahead", ClaimDecision.SKIP)
    LEASE_LIVE = ("running, its lease live", ClaimDecision.SKIP)
    LEASE_OVER = ("running, its lease over, attempts left", ClaimDecision.RUN)
    LEASE_OVER_FINAL = ("running, its lease over on the final attempt", ClaimDecision.DEAD)
    ENDED = ("completed, dead or cancelled", ClaimDecision.SKIP)

    @property
    def case(self) -> str:
        return self.value[0]

    @property
    def decision(self) -> ClaimDecision:
        return self.value[1]


def claim_rule(
    status: JobStatus,
    run_at: float,
    lease_until: float | None,
    attempts: int,
    max_attempts: int,
    now: float,
    skew: float = 0.0,
) -> ClaimRule:
    """The row of the claim's table a record is in at ``now``; ``skew`` as in ``lease_over``."""
    if status is WAITING:
        return ClaimRule.WAITING_FOR_PARENTS
    if status is QUEUED:
        return ClaimRule.QUEUED
    if status is DELAYED:
        return ClaimRule.DELAYED_DUE if run_at <= now else ClaimRule.DELAYED_NOT_DUE
    if status is RUNNING:
        if not lease_over(lease_until, now, skew):
            return ClaimRule.LEASE_LIVE
        return ClaimRule.LEASE_OVER_FINAL if attempts >= max_attempts else ClaimRule.LEASE_OVER
    return ClaimRule.ENDED


def claim_decision(
    status: JobStatus,
    run_at: float,
    lease_until: float | None,
    attempts: int,
    max_attempts: int,
    now: float,
    skew: float = 0.0,
) -> ClaimDecision:
    """What a claim at ``now`` does with a record (``ClaimRule``)."""
    return claim_rule(status, run_at, lease_until, attempts, max_attempts, now, skew).decision


def lease_over(lease_until: float | None, now: float, skew: float = 0.0) -> bool:
    """Whether a lease is over for a claimer whose clock may run ``skew`` seconds ahead.

    Only a claim that takes a lease over needs the margin: the holder extends its lease
    by its own clock, and a claimer whose clock runs ahead would otherwise start a second
    run while the first is alive. A single-process store has one clock (no skew).
    """
    return lease_until is not None and lease_until < now - skew


def holds_lease(status: JobStatus, token: str | None, claimed_token: str) -> bool:
    """Fencing: a write after a claim needs the record running under that claim's token."""
    return status is RUNNING and token is not None and token == claimed_token


def may_heartbeat(
    status: JobStatus, token: str | None, lease_until: float | None, claimed_token: str, now: float
) -> bool:
    return holds_lease(status, token, claimed_token) and not lease_over(lease_until, now)


def initial_status(run_at: float, now: float, after: Sequence[str] = ()) -> JobStatus:
    """A new job's status: waiting for its parents (``after``), else due now or later. A
    job released by its last parent takes the second, at that moment."""
    if after:
        return WAITING
    return QUEUED if run_at <= now else DELAYED


def parent_ended_error(parent_id: str, status: JobStatus) -> str:
    """``last_error`` of a waiting job cancelled because a parent ended ``status``."""
    return f"parent job {parent_id} ended {status.value}: its children do not run"


def after_failure(
    attempts: int, max_attempts: int, retry_at: float | None, now: float
) -> tuple[JobStatus, float]:
    """Status and ``run_at`` after a failed attempt: retry later, retry now, or dead."""
    if retry_at is None or attempts >= max_attempts:
        return DEAD, now
    if retry_at <= now:
        return QUEUED, retry_at
    return DELAYED, retry_at


def after_release(run_at: float | None, now: float) -> tuple[JobStatus, float]:
    """Status and ``run_at`` after a release: back at once, or (a start that a limit or a
    tenant's cap deferred) waiting until ``run_at``; either way the attempt is not counted."""
    if run_at is None or run_at <= now:
        return QUEUED, now
    return DELAYED, run_at


def release_ends_attempt(error: str, run_at: float | None) -> bool:
    """Whether a release ends an attempt that ran (``core.history`` notes it): one a stop or
    an invocation's deadline interrupted. A deferred start (``run_at``) never ran."""
    return run_at is None and str(error) in INTERRUPTED


def retention_end(
    status: JobStatus, at: float, retention: float, dead_retention: float
) -> float | None:
    """When a record that became ``status`` at ``at`` stops existing for readers."""
    if status is DEAD:
        return at + dead_retention
    if status in TERMINAL:
        return at + retention
    return None


def past_retention(expiry: float | None, now: float) -> bool:
    return expiry is not None and now >= expiry


def after_lease(job: Job) -> str:
    """What becomes of a claimed job whose outcome was not recorded (spec: "Fencing")."""
    if job.attempts >= job.max_attempts:
        return (
            f"this was its final attempt ({job.attempts} of {job.max_attempts}): "
            "the next claim after its lease dead-letters it"
        )
    return (
        f"the next claim after its lease runs it again "
        f"(this was attempt {job.attempts} of {job.max_attempts})"
    )
