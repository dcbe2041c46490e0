"""A batch's items on DynamoDB (``queue.batch``), as pure request builders.

A batch is a root item and one shard item per ``SHARD_SIZE`` of its jobs::

    batch#{id}        total, shards, callbacks (role -> job id), done (shard numbers
                      whose jobs have all ended, a number set); while open, an entry in
                      the list index's partition ``!batches``, which the reconciler reads
    batch#{id}#{k}    jobs (their ids, written once), completed / dead / cancelled (counts)

Each job of the batch keeps ``batch_shard``; the write that counts its end sets its
``batch_counted`` in the same transaction as the shard's count, conditional on its not
being set: so a job's end is counted once, however often that is tried. Shards keep the
counts small and spread: a batch of 10,000 jobs ending at 1,000 a second writes each of
its 400 shards a few times a second (``docs/explanation/scaling.md``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .index_keys import list_sk
from .items import BATCH_COUNTED, Attributes, number, text
from .protocol import Call

SHARD_SIZE = 25  # jobs per shard: a shard item stays within 1 KB
OPEN_BATCHES = "!batches"  # the list index's partition of open batches' roots
BATCH_FORMAT = 1


def root_key(batch_id: str) -> Attributes:
    return {"pk": text(f"batch#{batch_id}")}


def shard_key(batch_id: str, shard: int) -> Attributes:
    return {"pk": text(f"batch#{batch_id}#{shard}")}


def put_root(
    table: str,
    batch_id: str,
    total: int,
    shards: int,
    callbacks: Mapping[str, str],
    tenant: str | None,
    now: float,
) -> Call:
    item: Attributes = {
        **root_key(batch_id),
        "v": number(BATCH_FORMAT),
        "total": number(total),
        "shards": number(shards),
        "created_at": number(now),
        "callbacks": {"M": {role: text(job_id) for role, job_id in callbacks.items()}},
        "list_pk": text(OPEN_BATCHES),
        "list_sk": text(list_sk(now, batch_id)),
    }
    if tenant is not None:
        item["tenant"] = text(tenant)
    params = {
        "TableName": table,
        "Item": item,
        "ConditionExpression": "attribute_not_exists(#pk)",
        "ExpressionAttributeNames": {"#pk": "pk"},
    }
    return Call("dynamodb", "put_item", params)


def put_shard(table: str, batch_id: str, shard: int, job_ids: Sequence[str]) -> Call:
    item: Attributes = {
        **shard_key(batch_id, shard),
        "jobs": {"SS": list(job_ids)},
        "completed": number(0),
        "dead": number(0),
        "cancelled": number(0),
    }
    return Call("dynamodb", "put_item", {"TableName": table, "Item": item})


def count(table: str, job_key: Attributes, batch_id: str, shard: int, outcome: str) -> Call:
    """Count a job's end (``outcome``: completed, dead, cancelled) in its shard, once."""
    mark: dict[str, Any] = {
        "TableName": table,
        "Key": job_key,
        "UpdateExpression": "SET #counted = :outcome",
        "ConditionExpression": "attribute_not_exists(#counted)",
        "ExpressionAttributeNames": {"#counted": BATCH_COUNTED},
        "ExpressionAttributeValues": {":outcome": text(outcome)},
    }
    tally: dict[str, Any] = {
        "TableName": table,
        "Key": shard_key(batch_id, shard),
        "UpdateExpression": "ADD #outcome :one",
        "ExpressionAttributeNames": {"#outcome": outcome},
        "ExpressionAttributeValues": {":one": number(1)},
    }
    params = {"TransactItems": [{"Update": mark}, {"Update": tally}]}
    return Call("dynamodb", "transact_write_items", params)


def get(table: str, key: Attributes) -> Call:
    return Call("dynamodb", "get_item", {"TableName": table, "Key": key, "ConsistentRead": True})


def shard_done(table: str, batch_id: str, shard: int) -> Call:
    """Note a shard whose jobs have all ended on the root; the root as it is then."""
    params = {
        "TableName": table,
        "Key": root_key(batch_id),
        "UpdateExpression": "ADD #done :shard",
        "ExpressionAttributeNames": {"#done": "done"},
        "ExpressionAttributeValues": {":shard": {"NS": [str(shard)]}},
        "ReturnValues": "ALL_NEW",
    }
    return Call("dynamodb", "update_item", params)


def close(table: str, batch_id: str, now: float, expires_at: float) -> Call:
    """The batch has ended: out of the open batches' partition, kept until ``expires_at``."""
    params = {
        "TableName": table,
        "Key": root_key(batch_id),
        "UpdateExpression": "SET #ended = :now, #expires = :expires REMOVE #list_pk",
        "ExpressionAttributeNames": {
            "#ended": "ended_at",
            "#expires": "expires_at",
            "#list_pk": "list_pk",
        },
        "ExpressionAttributeValues": {":now": number(now), ":expires": number(expires_at)},
    }
    return Call("dynamodb", "update_item", params)
