"""Why a claim write was refused, judged on the record it returned (``ALL_OLD``): what
``flows.claim`` then does with the message that delivered it."""

from __future__ import annotations

from enum import Enum

from ...core.lifecycle import DELAYED, NEEDS_NO_MESSAGE, RUNNING, ClaimDecision, claim_decision
from ..wire.items import Stored
from . import debounce


class Refusal(Enum):
    """Why a claim write was refused, which decides what its message needs."""

    DELETE = "delete"
    MISROUTED = "misrouted"
    LEASE_ENDED = "lease_ended"
    LEASED = "leased"
    NOT_DUE = "not_due"
    DEBOUNCED = "debounced"
    LEAVE = "leave"


def why_refused(stored: Stored | None, queue: str, now: float, skew: float) -> Refusal:
    """Why a claim write was refused, and so what the message needs.

    Judged on the stored instants, by the rule the claim's condition applies.
    """
    if stored is None or stored.past_retention(now) or stored.job.status in NEEDS_NO_MESSAGE:
        return Refusal.DELETE
    job = stored.job
    if job.queue != queue:
        return Refusal.MISROUTED
    if debounce.pending(stored):
        return Refusal.DEBOUNCED
    decision = claim_decision(
        job.status, stored.run_at, stored.lease_until, job.attempts, job.max_attempts, now, skew
    )
    if decision is ClaimDecision.DEAD:
        return Refusal.LEASE_ENDED
    if decision is ClaimDecision.SKIP and job.status is RUNNING:
        return Refusal.LEASED
    if decision is ClaimDecision.SKIP and job.status is DELAYED:
        return Refusal.NOT_DUE
    return Refusal.LEAVE
