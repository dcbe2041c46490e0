"""Re-sending a waiting job's message: when it is overdue, and the write that claims it.

Two callers repair a record whose message went missing (a producer that failed between
``PutItem`` and ``SendMessage``, a message purged or lost): the reconciler's stale pass,
and a duplicate enqueue (``put``), which a producer's retry makes. Both claim the
re-send with one conditional write on the numbers they read, so however many of them
read the same record, one sends.
"""

from __future__ import annotations

from ...core.lifecycle import CLAIMABLE_LATER
from ..wire import dynamo
from ..wire.items import Stored
from ..wire.protocol import Call


def message_overdue(stored: Stored, now: float, after: float) -> bool:
    """Whether a waiting record's message should have been claimed ``after`` seconds ago.

    Its message went out when the record last changed (enqueue, retry, release, revive)
    or was last re-sent, and was due to be received at ``run_at``; a running record is
    its claimer's business.
    """
    if stored.job.status not in CLAIMABLE_LATER:
        return False
    last_sent = max(stored.updated_at, stored.resent_at or stored.updated_at, stored.run_at)
    return stored.run_at <= now and now - last_sent >= after


def mark_resent(table: str, stored: Stored, now: float) -> Call:
    """The conditional write that claims a re-send of ``stored``'s message for this caller."""
    return dynamo.mark_resent(table, stored.job.id, stored.updated_at, stored.resent_at, now)
