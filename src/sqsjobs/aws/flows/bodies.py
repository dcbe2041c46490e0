"""Payloads kept in body items: written before their records, read by claims and readers.

A payload over ``wire.items.INLINE_PAYLOAD_BYTES`` is compressed; if it still does not
fit in the record, it is written once, in an item of its own, so the record every
status change rewrites stays within one write unit. The body
goes first: a producer that dies between the two writes leaves an orphan body, which
its TTL removes, never a record without its payload. Readers fetch bodies with
eventually consistent ``BatchGetItem``s, and ask again, consistently, for any not found
(a body written a moment ago may not have reached every replica).

A body's TTL is fixed when it is written, ``BODY_LIFE`` plus the dead-letter retention
past the job's ``run_at``, so that no write at the end of a job has to touch it (a write
bills the item's size). A job still alive close to that (a claim with less than
``BODY_EXTEND_WITHIN`` plus the dead retention left, or a retry due beyond it) extends
it: one write of the body's size, for jobs that live for weeks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...core.models import Job
from ...core.validation import dump_json
from ..wire import dynamo
from ..wire.items import (
    BODY_EXTEND_WITHIN,
    BODY_LIFE,
    INLINE_PAYLOAD_BYTES,
    Attributes,
    Stored,
    body_item,
    body_key,
    is_long,
    item_from_job,
    job_key,
    new_body_pk,
    number,
    packed,
    payload_text,
    stored_from_item,
)
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Call, ConditionFailed, Flow, Parallel
from .batch_get import get_items

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import (
        GetItemInputTypeDef,
        PutItemInputTypeDef,
        UpdateItemInputTypeDef,
    )


def body_until(layout: Layout, run_at: float) -> float:
    return run_at + BODY_LIFE + layout.dead_retention


def new_items(
    layout: Layout, job: Job, fingerprint: str | None
) -> tuple[Attributes, Attributes | None]:
    """A new job's record and, for a long payload, the body item to write before it.

    Record format 1 (a fleet that still runs 0.1 readers) keeps every payload inline:
    those readers know neither compressed payloads nor body items.
    """
    payload = dump_json(job.payload)
    shards, record_format = layout.index_shards, layout.record_format
    if record_format == 1 or not is_long(payload):
        return item_from_job(job, fingerprint, shards, record_format=record_format), None
    squeezed = packed(payload)
    if len(squeezed) <= INLINE_PAYLOAD_BYTES:
        record = item_from_job(
            job, fingerprint, shards, squeezed=squeezed, record_format=record_format
        )
        return record, None
    until = body_until(layout, job.run_at.timestamp())
    key = new_body_pk(job.id)
    record = item_from_job(job, fingerprint, shards, body=(key, until), record_format=record_format)
    return record, body_item(key, payload, until)


def put_body(table: str, item: Attributes) -> Call:
    """Write a body (unconditionally: its key is new to this put, so it can overwrite
    nothing but botocore's own retry of this very write)."""
    params: PutItemInputTypeDef = {"TableName": table, "Item": item}
    return Call("dynamodb", "put_item", params)


def read_bodies(table: str, found: Sequence[Stored]) -> Flow[list[Stored]]:
    """``found`` with every payload kept in a body read into its job.

    A record whose body is missing even from a consistent read keeps a ``None``
    payload and ``needs_payload``; callers decide (a claim dead-letters it as malformed).
    """
    result = list(found)
    for consistent in (False, True):
        wanted = {s.body_pk: i for i, s in enumerate(result) if s.needs_payload and s.body_pk}
        if not wanted:
            break
        keys = [body_key(body_pk) for body_pk in wanted]
        for item in (yield from get_items(table, keys, consistent=consistent)):
            index = wanted[str(item["pk"]["S"])]
            result[index] = result[index].with_payload(payload_text(item))
    return result


def extend_bodies(
    layout: Layout, found: Sequence[Stored], until: float, *, strict: bool = False
) -> Flow[None]:
    """Extend the bodies that would not outlive ``until`` (plus the dead retention).

    A body (or record) that is gone is left so, unless ``strict``: then its refused
    write is raised (``ConditionFailed``).
    """
    short = [
        (s, s.body_pk)
        for s in found
        if s.body_until is not None and s.body_until < until + layout.dead_retention and s.body_pk
    ]
    if not short:
        return
    later = until + BODY_LIFE + layout.dead_retention
    calls = [_extend(layout.table, body_key(pk), "expires_at", later) for _, pk in short]
    calls += [_extend(layout.table, job_key(s.job.id), "body_until", later) for s, _ in short]
    for reply in (yield Parallel(tuple(calls))):
        if isinstance(reply, ConditionFailed) and not strict:
            continue
        if isinstance(reply, AwsError):
            raise reply


def keep_until(layout: Layout, job_id: str, run_at: float, now: float) -> Flow[None]:
    """After a retry or deferral due at ``run_at``: make its body live until then.

    A claim has already made it live ``BODY_EXTEND_WITHIN`` (plus the dead retention)
    past the claim, so only a job due later than that needs a look (one read).
    """
    if run_at <= claim_horizon(now):
        return
    reply = yield dynamo.get(layout.table, job_id)
    if "Item" in reply:
        yield from extend_bodies(layout, [stored_from_item(reply["Item"])], claim_horizon(run_at))


def get_body(table: str, body_pk: str) -> Call:
    """A consistent read of a job's body, as ``dynamo.get`` reads its record."""
    params: GetItemInputTypeDef = {
        "TableName": table,
        "Key": body_key(body_pk),
        "ConsistentRead": True,
    }
    return Call("dynamodb", "get_item", params)


def claim_horizon(now: float) -> float:
    """How far ahead a claim makes sure a body lives (besides the dead retention)."""
    return now + BODY_EXTEND_WITHIN


def _extend(table: str, key: Attributes, attribute: str, until: float) -> Call:
    params: UpdateItemInputTypeDef = {
        "TableName": table,
        "Key": key,
        "UpdateExpression": "SET #until = :until",
        "ConditionExpression": "attribute_exists(#pk)",
        "ExpressionAttributeNames": {"#until": attribute, "#pk": "pk"},
        "ExpressionAttributeValues": {":until": number(until)},
    }
    return Call("dynamodb", "update_item", params)
