"""Pure builders for the limit slots' DynamoDB requests (``sqsjobs.handlers.limits``).

A slot is one item, ``pk = "limit#{key}#{slot}"``, beside the job records in the same
table: ``holder`` (a claim's lease token), ``lease_until`` and ``expires_at``. It carries
none of the list index's attributes (``gsi_pk``, ``gsi_sk``), so no listing, count or
reconciler pass ever meets it, and no ``job#`` key, so no job read does either. Its
``expires_at`` (the table's TTL) is ``SLOT_TTL`` after its lease, so the slots of a
limit nobody uses any more disappear; a slot is free by its ``lease_until`` alone, long
before that (TTL deletion lags).

    take    PutItem     if attribute_not_exists(pk) OR lease_until < now
    extend  UpdateItem  SET lease_until, expires_at      if holder = me
    free    UpdateItem  SET lease_until = 0 REMOVE holder if holder = me

A take judges a lease by its own clock, with no ``clock_skew`` margin: a live holder
extends its concurrency slot every lease/3, two thirds of a lease ahead of any skew, so
only a crashed holder's slot can be taken early, which is harmless; and a rate window
padded by the skew would cut a rate of 5 per second to 5 per 3 seconds. Every write is one the
worker role already may make (``PutItem``, ``UpdateItem``); nothing here deletes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .items import Attributes, number, text
from .protocol import Call

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import PutItemInputTypeDef, UpdateItemInputTypeDef

SLOT_TTL = 3_600.0  # seconds an unused slot's item outlives its lease before TTL removes it


def slot_pk(key: str, slot: int) -> str:
    return f"limit#{key}#{slot}"


def slot_key(key: str, slot: int) -> Attributes:
    return {"pk": text(slot_pk(key, slot))}


def take(table: str, key: str, slot: int, holder: str, until: float, now: float) -> Call:
    """Hold ``slot`` for ``holder`` until ``until`` if it is free; refused with the holder."""
    params: PutItemInputTypeDef = {
        "TableName": table,
        "Item": {
            **slot_key(key, slot),
            "holder": text(holder),
            "lease_until": number(until),
            "expires_at": number(until + SLOT_TTL),
        },
        "ConditionExpression": "attribute_not_exists(#pk) OR #lease_until < :free_before",
        "ExpressionAttributeNames": {"#pk": "pk", "#lease_until": "lease_until"},
        "ExpressionAttributeValues": {":free_before": number(now)},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    return Call("dynamodb", "put_item", params)


def extend(table: str, key: str, slot: int, holder: str, until: float) -> Call:
    return _held_update(
        table,
        key,
        slot,
        holder,
        "SET #lease_until = :until, #expires_at = :expires_at",
        {":until": number(until), ":expires_at": number(until + SLOT_TTL)},
    )


def free(table: str, key: str, slot: int, holder: str) -> Call:
    return _held_update(
        table, key, slot, holder, "SET #lease_until = :zero REMOVE #holder", {":zero": number(0)}
    )


def _held_update(
    table: str, key: str, slot: int, holder: str, expression: str, values: dict[str, Any]
) -> Call:
    names = {"#holder": "holder", "#lease_until": "lease_until"}
    if "#expires_at" in expression:
        names["#expires_at"] = "expires_at"
    params: UpdateItemInputTypeDef = {
        "TableName": table,
        "Key": slot_key(key, slot),
        "UpdateExpression": expression,
        "ConditionExpression": "#holder = :holder",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": {**values, ":holder": text(holder)},
    }
    return Call("dynamodb", "update_item", params)


def holder_of(item: Attributes | None) -> tuple[str | None, float | None]:
    """Who holds a refused slot and until when, from the ALL_OLD item of a refused take."""
    if item is None:
        return None, None
    holder = item.get("holder", {}).get("S")
    until = item.get("lease_until", {}).get("N")
    return holder, None if until is None else float(until)
