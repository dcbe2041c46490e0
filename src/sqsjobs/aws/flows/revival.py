"""Running a dead job again, as every revive does it: the history entry it adds, and a
payload that must outlive the run it is revived for.

``retry``, ``redrive`` (``flows.redrive``) and a copy SQS moved back from a DLQ
(``flows.moved_back``) all revive through these.
"""

from __future__ import annotations

from ...core import history
from ...core.errors import JobConfigError
from ...core.history import action_entry
from ...core.models import Job
from ..wire.entries import Noted
from ..wire.items import Stored
from ..wire.layout import Layout
from ..wire.protocol import ConditionFailed, Flow
from .bodies import claim_horizon, extend_bodies, get_body


def revival(job: Job, now: float, kind: str, by: str | None) -> Noted:
    """The history entry of a dead ``job`` run again at ``now`` (a retry or a redrive)."""
    return action_entry(now, kind, history.QUEUED, by), job.history_count


def keep_body(layout: Layout, stored: Stored, now: float) -> Flow[None]:
    """Make sure a dead job's body is there and lives past its next claim, or refuse."""
    try:
        if stored.body_until is not None and stored.body_until < claim_horizon(now):
            yield from extend_bodies(layout, [stored], claim_horizon(now), strict=True)
            return
        assert stored.body_pk is not None
        body = yield get_body(layout.table, stored.body_pk)
        if "Item" in body:
            return
    except ConditionFailed:
        pass
    raise JobConfigError(
        "invalid_option",
        f"Job {stored.job.id} cannot run again: its payload is gone (its body item "
        f"{stored.body_pk} expired); enqueue the job anew with its payload",
    )
