"""DynamoDB condition expressions: the status rules of ``sqsjobs.core.lifecycle``, as written.

Each is named after the decision it applies (the comment beside it), so a conditional
write refuses exactly what the memory store refuses. ``#attr`` names an attribute (the
request builders in ``dynamo`` derive ``ExpressionAttributeNames`` from the text).
"""

from __future__ import annotations

import re

# holds_lease(): running under the claim's token.
HOLDS_LEASE = "#status = :running AND #lease_token = :token"
# may_heartbeat(): holds the lease, and the lease has not ended.
MAY_HEARTBEAT = f"{HOLDS_LEASE} AND #lease_until >= :now"
# A lease over, as a claim judges it: ``:lease_ended_before`` is ``now - clock_skew``, so a
# lease is taken over only once it ended by the claimer's clock *and* by one running up to
# ``clock_skew`` seconds behind it (``lease_over(lease_until, now, skew)``).
LEASE_OVER = "#lease_until < :lease_ended_before"
# claim_decision() == RUN: queued; delayed and due; running, lease expired, attempts left.
# A claim writes the first two (``DUE_NOW``); the third is a take-over
# (``TAKE_OVER``), written once a claim refused by such a record has read whose lease it
# takes over, so that its write can say so in the job's history (``dynamo.claim``).
DUE_NOW = "#status = :queued OR (#status = :delayed AND #run_at <= :now)"
TAKE_OVER = (
    f"#status = :running AND #lease_token = :old_token AND {LEASE_OVER} "
    "AND #attempts < #max_attempts"
)
CLAIMABLE = f"{DUE_NOW} OR ({TAKE_OVER})"
# claim_decision() == DEAD for the holder of ``:token``: its lease ended on the last attempt.
LEASE_ENDED_ON_LAST_ATTEMPT = f"{HOLDS_LEASE} AND {LEASE_OVER} AND #attempts >= #max_attempts"
# A running job whose run is gone: its lease is over (the reconciler, for redriven messages).
# The same rule as ``lease_over()`` on a running record, which readers check first.
ABANDONED = f"#status = :running AND {LEASE_OVER}"
# Not past its retention: readers treat an expired record as absent (TTL deletes lazily).
UNEXPIRED = "(attribute_not_exists(#expires_at) OR #expires_at > :now)"
# Dead and not yet past its retention: what an operator may run again (retry, redrive).
REVIVABLE = "#status = :dead AND #expires_at > :now"


_NAME = re.compile(r"#(\w+)")


def attribute_names(*expressions: str) -> dict[str, str]:
    """The ``ExpressionAttributeNames`` map, read from the expressions so it cannot drift."""
    return {f"#{n}": n for e in expressions for n in _NAME.findall(e)}
