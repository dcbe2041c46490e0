"""Pure SQS side: the message body, request builders, and when a message should come back.

The message body is a delivery token, never the job: ``{"v": 2, "id": ..., "queue": ...}``
(compact JSON, at most ``MAX_BODY_BYTES``). Version 1 bodies also carried the lease;
they are still read, their lease ignored. Anything else found on a queue is malformed
and is moved to the dead-letter queue rather than retried forever.

SQS limits that shape the rules here: ``DelaySeconds`` is at most 900, a visibility
timeout at most 43,200 (12 h) per receive, a batch at most 10 entries; every receive
counts towards the redrive policy's ``maxReceiveCount``, and a message lives at most the
queue's retention period (max 14 days) from its first send. ``plan_return`` keeps a job
whose message must come back later (a retry, a release, a delay past 15 minutes) clear of
the last two: it re-sends a fresh message instead of hiding the old one when either is near.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from ...core.validation import QUEUE_NAME
from .copy_marks import NAMES, copy_mark, read_mark
from .protocol import Call

if TYPE_CHECKING:
    from mypy_boto3_sqs.literals import QueueAttributeNameType
    from mypy_boto3_sqs.type_defs import (
        ChangeMessageVisibilityBatchRequestTypeDef,
        ChangeMessageVisibilityRequestTypeDef,
        DeleteMessageBatchRequestTypeDef,
        DeleteMessageRequestTypeDef,
        GetQueueAttributesRequestTypeDef,
        ReceiveMessageRequestTypeDef,
        SendMessageBatchRequestEntryTypeDef,
        SendMessageBatchRequestTypeDef,
        SendMessageRequestTypeDef,
    )

T = TypeVar("T")

BODY_VERSION = 2
# The fields of each body version this release reads; it writes BODY_VERSION only.
BODY_FIELDS: dict[int, frozenset[str]] = {
    1: frozenset({"v", "id", "queue", "lease"}),
    2: frozenset({"v", "id", "queue"}),
}
BODY_LIST = ", ".join(sorted(BODY_FIELDS[BODY_VERSION]))
MAX_BODY_BYTES = 1024
MAX_BATCH = 10
MAX_DELAY = 900
MAX_VISIBILITY = 43_200
MAX_WAIT = 20
FIFO_SUFFIX = ".fifo"
# The group of a copy whose original carried none (a body not written by this library):
# a FIFO queue needs one.
FALLBACK_GROUP = "sqsjobs"
# A hidden message must come back this long before the queue's retention would drop it.
RETENTION_MARGIN = 3_600.0


class MalformedMessage(ValueError):
    """A message that is not a job delivery token; ``reason`` says what is wrong with it."""


class Message(NamedTuple):
    """A received message: what claim, settle and re-send need to know about it."""

    message_id: str
    receipt_handle: str
    body: str
    receive_count: int
    sent_at: float  # epoch seconds of the first send (SQS keeps it across receives)
    group: str | None = None  # its MessageGroupId; a copy or re-send carries it on
    copied: bool = False  # a copy the store sent to a DLQ (``copy_marks``)
    revive_key: str | None = None  # on a dead job's copy: the key of that death


class QueueInfo(NamedTuple):
    """What the store knows about one job queue; ``None`` means the queue has no such limit."""

    url: str
    dead_letter_url: str | None
    max_receive_count: int | None
    retention: float = 345_600.0  # SQS default: 4 days
    # Seconds a received message stays hidden unless the receiver says otherwise (SQS's
    # default: 30). A worker's receive asks for this; a claimed job whose lease needs
    # another visibility costs one change of it, so a queue set to its jobs' usual lease
    # claims without one.
    visibility: int = 30


class Hide(NamedTuple):
    seconds: int


class Resend(NamedTuple):
    delay: int


def body(job_id: str, queue: str) -> str:
    """The delivery token: it names the job and its queue, and nothing a claim trusts more.

    Everything a claim needs (the lease above all) is read from the record: anyone
    allowed to send to the queue can write a body, and a body that set the lease could
    turn a healthy final attempt into a dead job.
    """
    return json.dumps({"v": BODY_VERSION, "id": job_id, "queue": queue}, separators=(",", ":"))


class MessageBody(NamedTuple):
    """What a message body says: the job it delivers (checked against its queue)."""

    job_id: str


def parse_body(text: str, queue: str) -> MessageBody:
    """The delivery token a message body for ``queue`` carries, or ``MalformedMessage``.

    Version 1 bodies (written before the lease was read from the record) still deliver
    their jobs: their ``lease`` field is ignored.
    """
    if len(text.encode()) > MAX_BODY_BYTES:
        raise MalformedMessage(f"body is over {MAX_BODY_BYTES} bytes")
    try:
        data = json.loads(text)
    except ValueError:
        raise MalformedMessage("body is not JSON") from None
    if not isinstance(data, dict):
        raise MalformedMessage(f"body is not an object with exactly the fields {BODY_LIST}")
    version = data.get("v")
    fields = None
    if isinstance(version, int) and not isinstance(version, bool):
        fields = BODY_FIELDS.get(version)
    if fields is None:
        raise MalformedMessage(f"body version {version!r} is not one of 1, {BODY_VERSION}")
    if set(data) != fields:
        listed = ", ".join(sorted(fields))
        raise MalformedMessage(f"body is not an object with exactly the fields {listed}")
    job_id, target = data["id"], data["queue"]
    if not isinstance(job_id, str) or not 1 <= len(job_id) <= 128 or not job_id.isprintable():
        raise MalformedMessage("id is not a string of 1..128 printable characters")
    if not isinstance(target, str) or QUEUE_NAME.fullmatch(target) is None:
        raise MalformedMessage("queue is not a valid queue name")
    if target != queue:
        raise MalformedMessage(f"message for queue {target!r} arrived on queue {queue!r}")
    return MessageBody(job_id)


def message_from_reply(raw: dict[str, Any]) -> Message:
    attributes = raw.get("Attributes", {})
    mark = read_mark(raw.get("MessageAttributes"))
    return Message(
        message_id=raw["MessageId"],
        receipt_handle=raw["ReceiptHandle"],
        body=raw.get("Body", ""),
        receive_count=int(attributes.get("ApproximateReceiveCount", "1")),
        sent_at=int(attributes.get("SentTimestamp", "0")) / 1000,
        group=attributes.get("MessageGroupId"),
        copied=mark.copied,
        revive_key=mark.revive_key,
    )


def message_from_record(raw: Mapping[str, Any]) -> Message:
    """A message as a Lambda SQS event record spells it (the fields a receive returns).

    A missing or unreadable receive count or send time reads as an unknown history: a
    first receive sent at epoch 0, so a return re-sends a fresh message (``plan_return``)
    rather than hiding one that may be near its receive limit or its retention.
    """
    attributes = raw.get("attributes")
    if not isinstance(attributes, Mapping):
        attributes = {}
    count = _whole(attributes.get("ApproximateReceiveCount"))
    sent = _whole(attributes.get("SentTimestamp"))
    group = attributes.get("MessageGroupId")  # a DLQ copy on a FIFO queue needs it
    if count is None or sent is None or count < 1:
        count, sent = 1, 0
    mark = read_mark(raw.get("messageAttributes"), "stringValue")
    return Message(
        message_id=str(raw["messageId"]),
        receipt_handle=str(raw["receiptHandle"]),
        body=str(raw.get("body", "")),
        receive_count=count,
        sent_at=sent / 1000,
        group=group if isinstance(group, str) and group else None,
        copied=mark.copied,
        revive_key=mark.revive_key,
    )


def _whole(value: object) -> int | None:
    """An attribute's whole number (SQS writes them as decimal strings), or ``None``."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 18:
        return int(value)
    return None


def whole_seconds(seconds: float) -> int:
    """Seconds rounded up for SQS, forgiving the sub-millisecond noise of datetimes.

    Record instants pass through ``datetime`` (microseconds), so ``lease_until - now``
    for a one-second lease can come out as 1.0000002; that is one second, not two.
    """
    return max(0, math.ceil(seconds - 0.001))


def effective_delay(delay: float) -> float:
    """A retry's delay as SQS carries it out: whole seconds of the message's visibility."""
    return float(whole_seconds(delay))


def send_delay(run_at: float, now: float) -> int:
    """``DelaySeconds`` for a job due at ``run_at``: later ones arrive early and hop."""
    return min(MAX_DELAY, whole_seconds(run_at - now))


def plan_return(
    message: Message, due_at: float, now: float, info: QueueInfo, *, hop: bool = False
) -> Hide | Resend:
    """How to make ``message`` come back at ``due_at`` without losing it.

    Hiding (``ChangeMessageVisibility``) is one request, but the next receive counts
    against ``maxReceiveCount`` and the message keeps its original age; re-sending a fresh
    message (send, then delete the old one) resets both. Hide while the next receive still
    leaves receives in hand (one for a retry or release; half the redrive budget for a
    ``hop`` of a job not yet due, which may hop many times and should arrive with most of
    its crash allowance intact) and the message comfortably outlives the hide. On a queue
    whose retention is too short for any full hide (under about 13 h), a hop hides for
    the room the retention leaves instead, when that is longer than a re-send's delay:
    back early and alive, it hops again (a fresh message twice a day, not every 15
    minutes).
    """
    seconds = min(MAX_VISIBILITY, whole_seconds(due_at - now))
    limit = info.max_receive_count
    spare = 1 if limit is None or not hop else max(1, limit // 2)
    receives_ok = limit is None or message.receive_count + 1 + spare <= limit
    room = message.sent_at + info.retention - RETENTION_MARGIN - now  # before it must be back
    if receives_ok and seconds < room:
        return Hide(seconds)
    short = info.retention - RETENTION_MARGIN < MAX_VISIBILITY + MAX_DELAY
    if receives_ok and hop and short and room > MAX_DELAY:
        return Hide(int(room))
    return Resend(send_delay(due_at, now))


def chunks(items: Sequence[T], size: int = MAX_BATCH) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def is_fifo(url: str) -> bool:
    """SQS requires every FIFO queue's name (the URL's last part) to end in ``.fifo``."""
    return url.endswith(FIFO_SUFFIX)


def route(
    params: SendMessageRequestTypeDef | SendMessageBatchRequestEntryTypeDef,
    url: str,
    delay: int,
    group: str | None,
) -> None:
    """The delivery fields of one message: its group, its dedup id or its delay.

    Every send carries its job's group: a FIFO queue requires one (and runs a group's
    messages one at a time, in order), and a standard queue passes it to SQS fair queues,
    which keep one group's burst from delaying the others. On a FIFO queue each call gets
    a fresh ``MessageDeduplicationId``: botocore's retries of one request resend the same
    parameters, so a lost response cannot duplicate the message, while every new send (a
    re-send, a retry, a redrive) is a new call and is never swallowed by the 5-minute
    deduplication window. FIFO queues refuse per-message delays: the message goes at once
    and the claim hides it until the job is due (``plan_return``), holding its group.
    """
    if is_fifo(url):
        params["MessageGroupId"] = group or FALLBACK_GROUP
        params["MessageDeduplicationId"] = uuid.uuid4().hex
        return
    if group is not None:
        params["MessageGroupId"] = group
    if delay:
        params["DelaySeconds"] = delay


def send(
    url: str,
    text: str,
    delay: int = 0,
    group: str | None = None,
    *,
    copy: bool = False,
    key: str | None = None,
) -> Call:
    """One message; ``copy`` marks it as the store's own copy in a DLQ, ``key`` (a dead
    job's copy) carries the key of that death (``copy_marks``)."""
    params: SendMessageRequestTypeDef = {"QueueUrl": url, "MessageBody": text}
    route(params, url, delay, group)
    if copy:
        params["MessageAttributes"] = copy_mark(key)
    return Call("sqs", "send_message", params)


Outgoing = tuple[str, int, str | None]  # body, delay, group


def send_batch(
    url: str,
    entries: Sequence[Outgoing],
    *,
    copy: bool = False,
    keys: Sequence[str | None] = (),
) -> Call:
    """Up to 10 ``(body, delay, group)`` entries; entry ids are their positions.

    ``copy`` marks them as the store's own copies in a DLQ, each with its death's key
    from ``keys`` (by position; none past its end) (``copy_marks``).
    """
    batch: list[SendMessageBatchRequestEntryTypeDef] = []
    for i, (text, delay, group) in enumerate(entries):
        entry: SendMessageBatchRequestEntryTypeDef = {"Id": str(i), "MessageBody": text}
        route(entry, url, delay, group)
        if copy:
            entry["MessageAttributes"] = copy_mark(keys[i] if i < len(keys) else None)
        batch.append(entry)
    params: SendMessageBatchRequestTypeDef = {"QueueUrl": url, "Entries": batch}
    return Call("sqs", "send_message_batch", params)


def receive(url: str, limit: int, wait: int, visibility: int) -> Call:
    params: ReceiveMessageRequestTypeDef = {
        "QueueUrl": url,
        "MaxNumberOfMessages": max(1, min(MAX_BATCH, limit)),
        "WaitTimeSeconds": max(0, min(MAX_WAIT, wait)),
        "VisibilityTimeout": max(0, min(MAX_VISIBILITY, visibility)),
        "MessageSystemAttributeNames": [
            "ApproximateReceiveCount",
            "SentTimestamp",
            "MessageGroupId",
        ],
        "MessageAttributeNames": NAMES,
    }
    return Call("sqs", "receive_message", params)


def delete(url: str, handle: str) -> Call:
    params: DeleteMessageRequestTypeDef = {"QueueUrl": url, "ReceiptHandle": handle}
    return Call("sqs", "delete_message", params)


def delete_batch(url: str, handles: Sequence[str]) -> Call:
    params: DeleteMessageBatchRequestTypeDef = {
        "QueueUrl": url,
        "Entries": [{"Id": str(i), "ReceiptHandle": h} for i, h in enumerate(handles)],
    }
    return Call("sqs", "delete_message_batch", params)


def change_visibility(url: str, handle: str, seconds: int) -> Call:
    params: ChangeMessageVisibilityRequestTypeDef = {
        "QueueUrl": url,
        "ReceiptHandle": handle,
        "VisibilityTimeout": max(0, min(MAX_VISIBILITY, seconds)),
    }
    return Call("sqs", "change_message_visibility", params)


def change_visibility_batch(url: str, entries: Sequence[tuple[str, int]]) -> Call:
    """Up to 10 ``(receipt handle, seconds)`` entries."""
    params: ChangeMessageVisibilityBatchRequestTypeDef = {
        "QueueUrl": url,
        "Entries": [
            {
                "Id": str(i),
                "ReceiptHandle": handle,
                "VisibilityTimeout": max(0, min(MAX_VISIBILITY, seconds)),
            }
            for i, (handle, seconds) in enumerate(entries)
        ],
    }
    return Call("sqs", "change_message_visibility_batch", params)


def queue_attributes(url: str, names: Sequence[QueueAttributeNameType]) -> Call:
    params: GetQueueAttributesRequestTypeDef = {"QueueUrl": url, "AttributeNames": list(names)}
    return Call("sqs", "get_queue_attributes", params)


def visibility_for(lease: float) -> int:
    """Whole seconds of visibility that cover a lease of ``lease`` seconds (max 12 h)."""
    return max(1, min(MAX_VISIBILITY, whole_seconds(lease)))
