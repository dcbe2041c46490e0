"""Debounce slots: one item per ``(queue, tenant, debounce_key)`` holding what the burst's
latest enqueue said, while its job has not started (``flows.debounce``).

    attribute    type  meaning
    pk           S     debounce#{hash of queue, tenant and key} (``keyed_id``'s hash)
    job_id       S     the burst's job: the first enqueue's id, kept by every later one
    v            N     how many enqueues the burst has had: the merge's fence
    payload      S     the latest payload (JSON text)
    run_at       N     the latest enqueue's time plus its ``debounce``
    created_at   N     the burst's first enqueue
    updated_at   N     its latest
    expires_at   N     TTL: ``run_at`` plus ``STRANDED``; a claim that merges the slot,
                       or a cancel of its job, sets it to ``ENDED``, which ends the burst
                       at once, whatever clock the next enqueue reads

An enqueue is one ``UpdateItem`` of the slot, refused only when the slot has expired (its
job started, or it was stranded); the job's record names the slot (``debounce_slot``)
until a claim has copied the slot into it. No item is ever deleted: no role may.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ...core.lifecycle import DELAYED, QUEUED
from .conditions import attribute_names
from .dynamo import statuses
from .items import DEBOUNCE_SLOT, Attributes, job_key, number, text
from .protocol import Call

SLOT_PREFIX = "debounce#"
ENDED = 0  # a slot's ``expires_at`` once its burst has ended: past for every clock
# A slot outlives its latest ``run_at`` by this, for the claim that merges it; past it, a
# slot whose job never ran (its producer died before writing the record) frees its key.
STRANDED = 3600.0


def slot_pk(queue: str, tenant: str | None, key: str) -> str:
    scope = json.dumps([queue, tenant, key], separators=(",", ":"))
    return SLOT_PREFIX + hashlib.sha256(scope.encode()).hexdigest()[:32]


def bump(table: str, pk: str, job_id: str, payload: str, run_at: float, now: float) -> Call:
    """One enqueue of a burst: the slot takes its payload and ``run_at`` (the first one
    also its job id); the slot as it is after comes back (``ALL_NEW``). Refused (with
    the old slot) once it has expired."""
    expression = (
        "SET #job_id = if_not_exists(#job_id, :job_id), #created_at = "
        "if_not_exists(#created_at, :now), #payload = :payload, #run_at = :run_at, "
        "#updated_at = :now, #expires_at = :expires_at ADD #v :one"
    )
    condition = "attribute_not_exists(#pk) OR #expires_at > :now"
    params = {
        "TableName": table,
        "Key": {"pk": text(pk)},
        "UpdateExpression": expression,
        "ConditionExpression": condition,
        "ExpressionAttributeNames": attribute_names(expression, condition),
        "ExpressionAttributeValues": {
            ":job_id": text(job_id),
            ":now": number(now),
            ":payload": text(payload),
            ":run_at": number(run_at),
            ":expires_at": number(run_at + STRANDED),
            ":one": number(1),
        },
        "ReturnValues": "ALL_NEW",
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    return Call("dynamodb", "update_item", params)


def renew(
    table: str, pk: str, job_id: str, payload: str, run_at: float, now: float, old_v: int
) -> Call:
    """A new burst in an expired slot (the old job started, or was stranded): the whole
    slot written again, conditional on its being the expired one read."""
    item: Attributes = {
        "pk": text(pk),
        "job_id": text(job_id),
        "v": number(old_v + 1),
        "payload": text(payload),
        "run_at": number(run_at),
        "created_at": number(now),
        "updated_at": number(now),
        "expires_at": number(run_at + STRANDED),
    }
    params = {
        "TableName": table,
        "Item": item,
        "ConditionExpression": "#v = :old_v AND #expires_at <= :now",
        "ExpressionAttributeNames": {"#v": "v", "#expires_at": "expires_at"},
        "ExpressionAttributeValues": {":old_v": number(old_v), ":now": number(now)},
    }
    return Call("dynamodb", "put_item", params)


def read(table: str, pk: str) -> Call:
    params = {"TableName": table, "Key": {"pk": text(pk)}, "ConsistentRead": True}
    return Call("dynamodb", "get_item", params)


def end(table: str, pk: str, job_id: str, now: float) -> Call:
    """End the burst of ``job_id`` (cancelled before it ran): the next enqueue starts a
    new job. Refused when the slot is another burst's by now."""
    params = {
        "TableName": table,
        "Key": {"pk": text(pk)},
        "UpdateExpression": "SET #expires_at = :ended",
        "ConditionExpression": "#job_id = :job_id AND #expires_at > :now",
        "ExpressionAttributeNames": {"#expires_at": "expires_at", "#job_id": "job_id"},
        "ExpressionAttributeValues": {
            ":now": number(now),
            ":ended": number(ENDED),
            ":job_id": text(job_id),
        },
    }
    return Call("dynamodb", "update_item", params)


def merge(table: str, pk: str, slot: Attributes, now: float) -> Call:
    """Copy a due slot into its job's record and end the burst, in one transaction:
    fenced by the slot's ``v`` (an enqueue since the read cancels it) and by the record
    still waiting to run with the slot named."""
    job_id = slot["job_id"]["S"]
    end_slot = {
        "TableName": table,
        "Key": {"pk": text(pk)},
        "UpdateExpression": "SET #expires_at = :ended",
        "ConditionExpression": "#v = :v AND #job_id = :job_id",
        "ExpressionAttributeNames": {"#expires_at": "expires_at", "#v": "v", "#job_id": "job_id"},
        "ExpressionAttributeValues": {
            ":ended": number(ENDED),
            ":v": slot["v"],
            ":job_id": text(job_id),
        },
    }
    record: dict[str, Any] = {
        "TableName": table,
        "Key": job_key(job_id),
        "UpdateExpression": "SET #payload = :payload, #run_at = :run_at, #updated_at = :now "
        "REMOVE #slot, #payload_z, #body_until, #body_pk",
        "ConditionExpression": "#slot = :pk AND #status IN (:queued, :delayed)",
        "ExpressionAttributeNames": {
            "#payload": "payload",
            "#run_at": "run_at",
            "#updated_at": "updated_at",
            "#slot": DEBOUNCE_SLOT,
            "#payload_z": "payload_z",
            "#body_until": "body_until",
            "#body_pk": "body_pk",
            "#status": "status",
        },
        "ExpressionAttributeValues": {
            ":payload": slot["payload"],
            ":run_at": slot["run_at"],
            ":now": number(now),
            ":pk": text(pk),
            **statuses(QUEUED, DELAYED),
        },
    }
    return Call(
        "dynamodb",
        "transact_write_items",
        {"TransactItems": [{"Update": end_slot}, {"Update": record}]},
    )


def forget(table: str, job_id: str, pk: str) -> Call:
    """Drop a record's slot name once the slot is no longer its burst's (merged by
    another claim, or taken by a newer burst): the record's payload is the job's."""
    params = {
        "TableName": table,
        "Key": job_key(job_id),
        "UpdateExpression": "REMOVE #slot",
        "ConditionExpression": "#slot = :pk",
        "ExpressionAttributeNames": {"#slot": DEBOUNCE_SLOT},
        "ExpressionAttributeValues": {":pk": text(pk)},
    }
    return Call("dynamodb", "update_item", params)
