"""The status table: pure decisions on plain fields and ``now``."""

from __future__ import annotations

import pytest

from sqsjobs import JobStatus
from sqsjobs.core.lifecycle import (
    CANCELLABLE,
    CLAIMABLE_LATER,
    TERMINAL,
    ClaimDecision,
    after_failure,
    claim_decision,
    holds_lease,
    initial_status,
    lease_over,
    may_heartbeat,
    past_retention,
    retention_end,
)

Q, D, R = JobStatus.QUEUED, JobStatus.DELAYED, JobStatus.RUNNING
W = JobStatus.WAITING
C, X, K = JobStatus.COMPLETED, JobStatus.DEAD, JobStatus.CANCELLED
NOW = 100.0


def test_status_sets() -> None:
    assert {C, X, K} == TERMINAL
    assert {Q, D} == CLAIMABLE_LATER
    assert {W, Q, D, R} == CANCELLABLE
    assert set(JobStatus) == TERMINAL | CANCELLABLE
    assert not TERMINAL & CANCELLABLE


@pytest.mark.parametrize(
    ("status", "run_at", "lease_until", "attempts", "max_attempts", "decision"),
    [
        (Q, NOW + 50, None, 0, 1, ClaimDecision.RUN),
        (D, NOW - 1, None, 0, 1, ClaimDecision.RUN),
        (D, NOW, None, 0, 1, ClaimDecision.RUN),
        (D, NOW + 0.001, None, 0, 1, ClaimDecision.SKIP),
        (R, NOW, NOW, 1, 3, ClaimDecision.SKIP),
        (R, NOW, NOW + 5, 1, 3, ClaimDecision.SKIP),
        (R, NOW, NOW - 0.001, 1, 3, ClaimDecision.RUN),
        (R, NOW, NOW - 5, 2, 3, ClaimDecision.RUN),
        (R, NOW, NOW - 5, 3, 3, ClaimDecision.DEAD),
        (R, NOW, NOW - 5, 4, 3, ClaimDecision.DEAD),
        (R, NOW, None, 1, 3, ClaimDecision.SKIP),
        (C, NOW - 5, None, 1, 3, ClaimDecision.SKIP),
        (X, NOW - 5, None, 1, 3, ClaimDecision.SKIP),
        (K, NOW - 5, None, 0, 3, ClaimDecision.SKIP),
        (W, NOW - 5, None, 0, 3, ClaimDecision.SKIP),
    ],
)
def test_claim_decision(
    status: JobStatus,
    run_at: float,
    lease_until: float | None,
    attempts: int,
    max_attempts: int,
    decision: ClaimDecision,
) -> None:
    assert claim_decision(status, run_at, lease_until, attempts, max_attempts, NOW) is decision


@pytest.mark.parametrize(
    ("lease_until", "expired"), [(None, False), (NOW + 1, False), (NOW, False), (NOW - 1, True)]
)
def test_a_lease_expires_only_once_lease_until_is_before_now(
    lease_until: float | None, expired: bool
) -> None:
    assert lease_over(lease_until, NOW) is expired


@pytest.mark.parametrize(
    ("status", "token", "held"),
    [(R, "t1", True), (R, "t2", False), (R, None, False), (Q, "t1", False), (C, "t1", False)],
)
def test_holds_lease_needs_running_with_the_same_token(
    status: JobStatus, token: str | None, held: bool
) -> None:
    assert holds_lease(status, token, "t1") is held


@pytest.mark.parametrize(
    ("status", "token", "lease_until", "allowed"),
    [
        (R, "t1", NOW + 1, True),
        (R, "t1", NOW, True),
        (R, "t1", NOW - 0.001, False),
        (R, "t2", NOW + 1, False),
        (D, "t1", NOW + 1, False),
    ],
)
def test_may_heartbeat_needs_the_lease_and_time_left_on_it(
    status: JobStatus, token: str, lease_until: float, allowed: bool
) -> None:
    assert may_heartbeat(status, token, lease_until, "t1", NOW) is allowed


@pytest.mark.parametrize(("run_at", "status"), [(NOW - 1, Q), (NOW, Q), (NOW + 0.5, D)])
def test_initial_status(run_at: float, status: JobStatus) -> None:
    assert initial_status(run_at, NOW) is status


@pytest.mark.parametrize(
    ("attempts", "max_attempts", "retry_at", "outcome"),
    [
        (1, 3, NOW + 5, (D, NOW + 5)),
        (1, 3, NOW, (Q, NOW)),
        (1, 3, NOW - 2, (Q, NOW - 2)),
        (1, 3, None, (X, NOW)),
        (3, 3, NOW + 5, (X, NOW)),
        (4, 3, NOW - 2, (X, NOW)),
    ],
)
def test_after_failure(
    attempts: int, max_attempts: int, retry_at: float | None, outcome: tuple[JobStatus, float]
) -> None:
    assert after_failure(attempts, max_attempts, retry_at, NOW) == outcome


@pytest.mark.parametrize(
    ("status", "expiry"),
    [(C, NOW + 10), (K, NOW + 10), (X, NOW + 70), (Q, None), (D, None), (R, None)],
)
def test_retention_end(status: JobStatus, expiry: float | None) -> None:
    assert retention_end(status, NOW, 10, 70) == expiry


@pytest.mark.parametrize(
    ("expiry", "expired"), [(None, False), (NOW + 1, False), (NOW, True), (NOW - 1, True)]
)
def test_is_expired_from_the_expiry_instant_on(expiry: float | None, expired: bool) -> None:
    assert past_retention(expiry, NOW) is expired
