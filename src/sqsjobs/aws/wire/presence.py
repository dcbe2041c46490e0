"""Presence records in the job table (``core.presence``): the item, its codec, its requests.

One item per worker, ``pk = "worker#{worker_id}"``, beside the job records, body items and
limit slots (each kind its own ``pk`` prefix, which is what IAM's ``dynamodb:LeadingKeys``
tells apart). Listing them must not read the table (a ``Scan`` bills every job it keeps),
so each also has keys in the list index ``by_queue``: ``list_pk = "!workers"``, a
partition no queue can have (a queue's partitions, ``"{queue}#{shard}"`` and
``"{queue}#{shard}#{status}"``, all hold a ``#``, which this one does not, and no queue
name holds a ``!``), and ``list_sk`` the worker id. Every reader of jobs
queries its queues' partitions by name, this release's and 0.1's and 0.2's alike, so
none of them meets a presence entry; and a presence item has no ``job#`` key, so no job
read does either.

The index projects ``expires_at`` (the table's TTL) and nothing else a presence item
has, so a reader queries the partition for the live entries (``expires_at > now``: TTL
deletes days late) and reads their items with ``BatchGetItem``. Each write puts the whole
item, so a write that moved ``expires_at`` also rewrites the index entry: a heartbeat
bills one write unit for the item (under 1 KB: the job names, when long, are kept
compressed) and one for the index. A clean stop sets ``expires_at`` to the moment of the
stop (an ``UpdateItem``: no role of the templates may delete an item).

    attribute      type  meaning
    pk             S     worker#{worker_id}
    list_pk        S     !workers
    list_sk        S     the worker id
    v              N     1: the presence format
    host, version  S     the host name; the sqsjobs release it runs
    pid            N     its process id (absent where it has none to give)
    queues         S     JSON list of the queues it claims from
    names          S     JSON list of the job names it serves, or instead
    names_z        B     that text compressed (zlib), when it is longer than 512 bytes
    concurrency    N
    running        N     jobs running at the write
    started_at     N     epoch seconds
    heartbeat_at   N     the write's time
    expires_at     N     TTL: heartbeat_at + PRESENCE_TTL; the stop's time after a stop
    claims         S     JSON object: queue -> epoch seconds of its last claim there
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...core.presence import WorkerPresence
from ...core.times import epoch, utc
from .index_keys import INDEX
from .items import TTL_ATTRIBUTE, Attributes, number, text
from .protocol import Call

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import (
        PutItemInputTypeDef,
        QueryInputTypeDef,
        UpdateItemInputTypeDef,
    )

PRESENCE_PREFIX = "worker#"
# The list index partition of presence entries: "!" is in no queue name (and "!" sorts
# before every character a queue name or a job's sort key starts with).
PRESENCE_PARTITION = "!workers"
PRESENCE_FORMAT = 1
INLINE_NAMES = 512  # bytes of job names' JSON text kept as they are; longer, compressed


def presence_pk(worker_id: str) -> str:
    return f"{PRESENCE_PREFIX}{worker_id}"


def presence_key(worker_id: str) -> Attributes:
    return {"pk": text(presence_pk(worker_id))}


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def presence_item(presence: WorkerPresence) -> Attributes:
    """The item of one presence record, every field of it."""
    names = _compact(list(presence.names)).encode()
    item: Attributes = {
        **presence_key(presence.worker_id),
        "list_pk": text(PRESENCE_PARTITION),
        "list_sk": text(presence.worker_id),
        "v": number(PRESENCE_FORMAT),
        "host": text(presence.host),
        "version": text(presence.version),
        "queues": text(_compact(list(presence.queues))),
        "concurrency": number(presence.concurrency),
        "running": number(presence.running),
        "started_at": number(epoch(presence.started_at)),
        "heartbeat_at": number(epoch(presence.heartbeat_at)),
        TTL_ATTRIBUTE: number(epoch(presence.expires_at)),
    }
    if len(names) > INLINE_NAMES:
        item["names_z"] = {"B": zlib.compress(names, 9)}
    else:
        item["names"] = text(names.decode())
    if presence.pid is not None:
        item["pid"] = number(presence.pid)
    if presence.last_claims:
        claims = {queue: epoch(at) for queue, at in presence.last_claims.items()}
        item["claims"] = text(_compact(claims))
    return item


def presence_from_item(item: Mapping[str, Any]) -> WorkerPresence | None:
    """The record an item holds; ``None`` for one this release cannot read (a later
    presence format, a field missing or of the wrong type): a reader skips it."""
    try:
        if int(item["v"]["N"]) != PRESENCE_FORMAT:
            return None
        if "names_z" in item:
            names_text = zlib.decompress(bytes(item["names_z"]["B"])).decode()
        else:
            names_text = str(item["names"]["S"])
        claims = json.loads(item["claims"]["S"]) if "claims" in item else {}
        return WorkerPresence(
            worker_id=str(item["pk"]["S"]).removeprefix(PRESENCE_PREFIX),
            host=str(item["host"]["S"]),
            pid=int(item["pid"]["N"]) if "pid" in item else None,
            version=str(item["version"]["S"]),
            queues=tuple(str(queue) for queue in json.loads(item["queues"]["S"])),
            names=tuple(str(name) for name in json.loads(names_text)),
            concurrency=int(item["concurrency"]["N"]),
            running=int(item["running"]["N"]),
            started_at=utc(float(item["started_at"]["N"])),
            heartbeat_at=utc(float(item["heartbeat_at"]["N"])),
            expires_at=utc(float(item[TTL_ATTRIBUTE]["N"])),
            last_claims={str(queue): utc(float(at)) for queue, at in claims.items()},
        )
    except (KeyError, TypeError, ValueError, AttributeError, zlib.error):
        return None


def live(item: Mapping[str, Any], now: float) -> bool:
    """Whether an item's record runs out after ``now``, judged on the stored number (a
    datetime would round it to the microsecond)."""
    try:
        return float(item[TTL_ATTRIBUTE]["N"]) > now
    except (KeyError, TypeError, ValueError):
        return False


def put_presence(table: str, presence: WorkerPresence) -> Call:
    """Write the whole record, unconditionally: only its worker writes it."""
    params: PutItemInputTypeDef = {"TableName": table, "Item": presence_item(presence)}
    return Call("dynamodb", "put_item", params)


def end_presence(table: str, worker_id: str, now: float) -> Call:
    """Make the record run out at ``now``; refused (and nothing written) when there is
    none, since an ``UpdateItem`` would otherwise create a bare item."""
    params: UpdateItemInputTypeDef = {
        "TableName": table,
        "Key": presence_key(worker_id),
        "UpdateExpression": "SET #expires_at = :now, #running = :zero",
        "ConditionExpression": "attribute_exists(#pk)",
        "ExpressionAttributeNames": {
            "#pk": "pk",
            "#expires_at": TTL_ATTRIBUTE,
            "#running": "running",
        },
        "ExpressionAttributeValues": {":now": number(now), ":zero": number(0)},
    }
    return Call("dynamodb", "update_item", params)


def query_presences(table: str, now: float, start: Mapping[str, Any] | None) -> Call:
    """One page of the live presence entries of the list index (keys and expiry only)."""
    params: QueryInputTypeDef = {
        "TableName": table,
        "IndexName": INDEX,
        "KeyConditionExpression": "#list_pk = :partition",
        "FilterExpression": "#expires_at > :now",
        "ExpressionAttributeNames": {"#list_pk": "list_pk", "#expires_at": TTL_ATTRIBUTE},
        "ExpressionAttributeValues": {":partition": text(PRESENCE_PARTITION), ":now": number(now)},
    }
    if start is not None:
        params["ExclusiveStartKey"] = dict(start)
    return Call("dynamodb", "query", params)
