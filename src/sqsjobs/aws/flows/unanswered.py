"""Claim writes that got no answer: undone at once, and again if they apply late.

A claim write that times out, or whose response is lost, may have been applied. Applied,
it holds the job under a lease nobody runs: the job waits out the lease and spends an
attempt, and on its last attempt the next claim dead-letters a job that never ran. So the
claimer releases it at once under the claim's token (``undo``), which only that claim
has: refused when the claim was not applied, and moot when it fails.

A try still in flight may be applied after that release (the table was slow, not down):
the job is then running again under the same token. The store keeps the tokens of its
unanswered claims, and a later claim refused by a record running under one of them
(``late``) releases it too, so the job is claimed anew at once.

A response lost on the way back, which botocore retries, is the same case seen from the
other side: when the lost try was applied, the retry is refused by the record it wrote,
and that refusal is the claim's success (``own_claim``).
"""

from __future__ import annotations

import contextlib

from ...core.lifecycle import RUNNING, after_release
from ..wire import transitions
from ..wire.items import Stored
from ..wire.layout import Layout
from ..wire.protocol import AwsError, ConditionFailed, Flow, Reply, Throttled

UNANSWERED = "its claim got no answer from the table"


def no_answer(reply: object) -> bool:
    """Whether a claim write's reply leaves its fate unknown: no answer at all (a timeout,
    a reset connection) or a server error. A refusal (4xx) was not applied, and an SDK
    failure before sending (no credentials: ``retryable`` False) sent nothing."""
    if not isinstance(reply, AwsError) or isinstance(reply, ConditionFailed | Throttled):
        return False
    response = getattr(reply.cause, "response", None)
    if not isinstance(response, dict):
        return reply.retryable is not False
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    return isinstance(status, int) and status >= 500


def undo(layout: Layout, job_id: str, token: str, now: float) -> Flow[None]:
    """Release the claim ``token`` made, if it holds the job (the attempt not counted)."""
    call = transitions.release(
        layout.indexed, job_id, token, UNANSWERED, now, after_release(None, now)
    )
    with contextlib.suppress(AwsError):
        yield call


def late(stored: Stored | None, token: str | None) -> bool:
    """Whether ``stored`` is running under ``token``, an unanswered claim's."""
    return (
        token is not None
        and stored is not None
        and stored.job.status is RUNNING
        and stored.job.lease_token == token
    )


def own_claim(reply: Reply | AwsError, lease_token: str) -> Reply | AwsError:
    """A claim refused because it already holds the job is this claim's success.

    botocore retries a request whose response was lost; when the lost one was applied,
    the retry finds the job running under the token it wrote itself (tokens are random
    per claim, and only this claim's holder could have changed the record since).
    Taken for a refusal, it would leave the job leased to nobody until the lease ended,
    spending an attempt (on a last attempt, dead-lettering a job that never ran).
    """
    if not isinstance(reply, ConditionFailed) or reply.item is None:
        return reply
    if reply.item.get("lease_token") != {"S": lease_token}:
        return reply
    return {"Attributes": reply.item}
