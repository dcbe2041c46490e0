"""Messages SQS moved back from a dead-letter queue: the job runs again, or a loud refusal.

The AWS console's "Start DLQ redrive" (``StartMessageMoveTask``) moves a DLQ's messages
back to their source queue as new messages that keep their bodies and attributes. The
operator means the jobs to run again, but their records still say ``dead``, which no
claim takes. A claim refused by a dead record asks ``moved_back`` what its message is::

    not sent after the death, or another queue's job ──► None: a stray duplicate, deleted
    the store's copy of this death (its key matches)  ──► revived, then sent fresh: it runs
    anything else sent after the death               ──► refused: deleted, with the reason

The key (``copy_marks``) is what tells the store's copy from a forged one: the revive is
conditional on it, so a message that only names a dead job revives nothing. A revive is
the one ``sqsjobs dlq redrive`` makes (attempts reset, ``last_error`` kept, an entry in
the job's history, by ``SQS_REDRIVE``); the copy is then deleted once a fresh, unmarked
message for the job is on its queue, so the job's next death is judged like any other.

A job the redrive policy moved after its runs kept dying has no copy, only its own
message, which anyone able to send to the queue could imitate: it is refused, and the
refusal (a WARNING the store logs) names ``sqsjobs dlq redrive``, ``sqsjobs jobs retry``
and the dashboard, which run it again from the record.
"""

from __future__ import annotations

import contextlib
import hmac
from typing import NamedTuple

from ...core import history
from ...core.errors import JobConfigError
from ...core.lifecycle import DEAD
from ...core.models import Job
from ..wire import transitions
from ..wire.items import Stored, stored_from_item
from ..wire.layout import Layout
from ..wire.protocol import AwsError, ConditionFailed, Flow
from ..wire.sqs import Message
from .bodies import claim_horizon, extend_bodies
from .revival import keep_body, revival

SQS_REDRIVE = "SQS DLQ redrive (StartMessageMoveTask)"  # who a revive's history names

NOT_A_COPY = (
    "it is not a copy the store sent (the queue's redrive policy moved the job's own "
    "message after its runs kept dying, or it was sent by hand)"
)
NO_KEY = "it carries no key of the job's death (a copy sent by a release before 0.3)"
WRONG_KEY = "its key is not that of the job's latest death (an older copy, or a forged one)"
PAYLOAD_GONE = "its payload is gone (its body item expired)"


class MovedBack(NamedTuple):
    """A message for a dead job that arrived after the job died, and what became of it."""

    job: Job  # as revived, or as it stays (dead)
    message_id: str
    refused: str | None = None  # why it did not revive the job; None: the job runs again


def moved_back(
    layout: Layout, queue: str, message: Message, stored: Stored | None, now: float
) -> Flow[MovedBack | None]:
    """What ``message``, whose claim ``stored`` refused, is: see the module docstring.

    ``None`` unless the record is ``queue``'s dead job and the message came after its
    death (a copy of it, or sent since by SQS's clock, ``clock_skew`` allowed).
    """
    if stored is None or stored.past_retention(now) or stored.job.status is not DEAD:
        return None
    job = stored.job
    if job.queue != queue:
        return None
    if not message.copied:
        if message.sent_at <= stored.updated_at + layout.clock_skew:
            return None
        return MovedBack(job, message.message_id, NOT_A_COPY)
    if message.revive_key is None or stored.revive_key is None:
        return MovedBack(job, message.message_id, NO_KEY)
    if not hmac.compare_digest(message.revive_key, stored.revive_key):
        return MovedBack(job, message.message_id, WRONG_KEY)
    return (yield from _revive(layout, stored, message, now))


def _revive(layout: Layout, stored: Stored, message: Message, now: float) -> Flow[MovedBack | None]:
    """Run the job again as a redrive would; ``None`` if its record moved on meanwhile."""
    job = stored.job
    try:
        if stored.body_pk is not None:
            yield from keep_body(layout, stored, now)
    except JobConfigError:
        return MovedBack(job, message.message_id, PAYLOAD_GONE)
    entry = revival(job, now, history.REDRIVE, SQS_REDRIVE)
    try:
        reply = yield transitions.revive(
            layout.indexed, (job.id, job.queue), [job.queue], now, entry, key=message.revive_key
        )
    except ConditionFailed:  # revived by someone else, or dead again: a duplicate now
        return None
    revived = stored_from_item(reply["Attributes"])
    with contextlib.suppress(AwsError):  # the next claim extends it otherwise
        yield from extend_bodies(layout, [revived], claim_horizon(now))
    return MovedBack(revived.job, message.message_id)
