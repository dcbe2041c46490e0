"""A Lambda event as the jobs handler reads it (``sqsjobs.aws.lambda_``): refused whole,
or its records to run and those to skip.

The event is read whole first. One that is no SQS event, or has a record from a queue
the store does not know, is refused (``JobConfigError``, ``invalid_event``) before
anything is done. A record no event source mapping sends (not an object; a field
Lambda always copies missing or empty) is skipped, to be logged by its message id or its
place; the handler's module says why each is so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ...core.errors import JobConfigError
from ...core.text import safe_line
from .sqs import Message, message_from_record

SQS_SOURCE = "aws:sqs"
QUEUE_ARN = re.compile(r"arn:[^:\s]+:sqs:[^:\s]*:[^:\s]*:(?P<name>[^:\s]+)")
# The fields Lambda copies from every received message; without one a record cannot be
# claimed, settled or named.
REQUIRED = ("messageId", "receiptHandle", "body", "eventSourceARN")
SHOWN = 5  # skipped records named per reason in the log line; the count says the rest


class EventRecord(NamedTuple):
    """One SQS record of a Lambda event, as the store sees a received message."""

    queue: str
    fifo: bool
    message: Message


class Batch(NamedTuple):
    """An SQS event as read: the records to run, and the skipped ones by reason."""

    records: list[EventRecord]
    skipped: dict[str, list[str]]  # reason -> the records' ids (or positions, ``#3``)


def read_event(event: object, queues: Mapping[str, str]) -> Batch:
    """The event's records to run and those to skip; ``JobConfigError`` for an event that
    is not an SQS event of ``queues`` (the store's queue names, by their SQS names)."""
    batch = Batch([], {})
    for index, raw in enumerate(sqs_records(event)):
        read = _record(raw, queues)
        if isinstance(read, EventRecord):
            batch.records.append(read)
        else:
            batch.skipped.setdefault(read, []).append(_label(index, raw))
    return batch


def _record(raw: object, queues: Mapping[str, str]) -> EventRecord | str:
    """The record as the store sees it, or why it is skipped."""
    if not isinstance(raw, Mapping):
        return f"not an object ({_kind(raw)})"
    for field in REQUIRED:
        value = raw.get(field)
        if not isinstance(value, str) or not value:
            return f"{field} missing, empty or not a string"
    source: str = raw["eventSourceARN"]
    match = QUEUE_ARN.fullmatch(source)
    if match is None:
        return "eventSourceARN is not an SQS queue's ARN"
    queue = queues.get(match["name"])
    if queue is None:
        known = ", ".join(sorted(queues)) or "none"
        raise JobConfigError(
            "invalid_event",
            f"Event record from {_quoted(source)}: this store's queues are {known}; "
            "map this function only to its store's queues. Nothing was done.",
        )
    return EventRecord(queue, match["name"].endswith(".fifo"), message_from_record(raw))


def sqs_records(event: object) -> Sequence[object]:
    """The records of an SQS event, or ``JobConfigError`` naming what came instead.

    A record that names its source names it in ``eventSource`` (SNS: ``EventSource``);
    one source other than SQS makes the whole event another service's, since a mapping
    never mixes sources.
    """
    if not isinstance(event, Mapping):
        raise _not_sqs(_kind(event))
    records = event.get("Records")
    if not isinstance(records, list | tuple):
        raise _not_sqs(_described(event))
    for raw in records:
        source = (
            raw.get("eventSource", raw.get("EventSource")) if isinstance(raw, Mapping) else None
        )
        if isinstance(source, str) and source != SQS_SOURCE:
            raise _not_sqs(f"an event whose records come from {_quoted(source)}")
    return records


def _not_sqs(what: str) -> JobConfigError:
    return JobConfigError(
        "invalid_event",
        f"The jobs handler takes SQS events ({{'Records': [...]}}, each record with "
        f"eventSource {SQS_SOURCE!r}, from the queue's event source mapping); it got {what}. "
        "Nothing was done.",
    )


def _described(event: Mapping[Any, Any]) -> str:
    """What an event without a ``Records`` list is, in words, to name it in the error."""
    if "Records" in event:
        return f"an object whose 'Records' is {_kind(event['Records'])}, not a list"
    if "detail-type" in event:
        kind, source = _quoted(event["detail-type"]), _quoted(event.get("source"))
        scheduled = " (a schedule is for make_reconcile_handler or make_cron_handler)"
        hint = scheduled if event["detail-type"] == "Scheduled Event" else ""
        return f"an EventBridge event (source {source}, detail-type {kind}){hint}"
    if "httpMethod" in event or isinstance(event.get("requestContext"), Mapping):
        route = event.get("routeKey") or f"{event.get('httpMethod')} {event.get('path')}"
        return f"an API Gateway request ({_quoted(route)})"
    keys = [_quoted(key) for key in list(event)[: SHOWN + 1]]
    listed = ", ".join(keys[:SHOWN]) + (", ..." if len(keys) > SHOWN else "")
    return f"an object with keys {listed} and no 'Records'" if keys else "an empty object"


def _quoted(value: object) -> str:
    """A value from the event, quoted, one line and short: it goes into logs and errors."""
    text = safe_line(str(value))
    return repr(text if len(text) <= 100 else text[:99] + "…")


def _kind(value: object) -> str:
    """A value's kind as the error names it: JSON's ``null`` arrives as ``None``."""
    return "None" if value is None else f"a {type(value).__name__}"


def _label(index: int, raw: object) -> str:
    """How the log names a skipped record: its message id if it has one, else its place."""
    message_id = raw.get("messageId") if isinstance(raw, Mapping) else None
    if isinstance(message_id, str) and message_id:
        return _quoted(message_id)
    return f"#{index}"
