"""The fleet's control item in the job table: which queues are paused, and since when.

One item, ``pk = "control#queues"``, with an attribute per paused queue,
``paused:{queue}`` = the epoch second of its pause. A pause sets it (keeping the first
pause's time), a resume removes it: each one ``UpdateItem`` of one attribute, so
concurrent pauses and resumes of different queues never undo each other, and no read
comes first. Readers take the whole item (one ``GetItem``, under 1 KB: half a read
unit, eventually consistent) and every worker and Lambda handler of every queue shares
it. It has no ``job#`` key, no ``list_pk`` and no TTL: no job read or list meets it,
and it lasts as long as the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .items import Attributes, number, text
from .protocol import Call

CONTROL_KEY: Attributes = {"pk": text("control#queues")}
PAUSED_PREFIX = "paused:"


def pause(table: str, queue: str, now: float) -> Call:
    params = {
        "TableName": table,
        "Key": CONTROL_KEY,
        "UpdateExpression": "SET #q = if_not_exists(#q, :now)",
        "ExpressionAttributeNames": {"#q": PAUSED_PREFIX + queue},
        "ExpressionAttributeValues": {":now": number(now)},
    }
    return Call("dynamodb", "update_item", params)


def resume(table: str, queue: str) -> Call:
    params = {
        "TableName": table,
        "Key": CONTROL_KEY,
        "UpdateExpression": "REMOVE #q",
        "ExpressionAttributeNames": {"#q": PAUSED_PREFIX + queue},
    }
    return Call("dynamodb", "update_item", params)


def read(table: str) -> Call:
    """The control item; eventually consistent, as a pause is noticed within seconds."""
    return Call("dynamodb", "get_item", {"TableName": table, "Key": CONTROL_KEY})


def paused_queues(item: Attributes | None) -> Mapping[str, float]:
    """Each paused queue and its pause's time, from the control item (None: no item)."""
    found = {
        name.removeprefix(PAUSED_PREFIX): float(value["N"])
        for name, value in (item or {}).items()
        if name.startswith(PAUSED_PREFIX) and "N" in value
    }
    return MappingProxyType(found)
