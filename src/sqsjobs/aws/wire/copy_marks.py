"""The marks on the store's own dead-letter copies, and the key that lets one run its job again.

Every message the store sends to a DLQ carries ``COPY_ATTRIBUTE`` (a dead job's copy, a
malformed or misrouted message). A message the redrive policy moved has none: it is the
job queue's own message, with the attributes its sender gave it, and a sender cannot
reach the DLQ to forge one with it (the producer policy allows ``SendMessage`` on job
queues only), while a copy cannot lose it.

A dead job's copy also carries ``REVIVE_ATTRIBUTE``: a random key the write that recorded
the death stored on the record (``revive_key``). SQS's own DLQ redrive
(``StartMessageMoveTask``, the console's "Start DLQ redrive") moves a message back to its
source queue as a new message that keeps its body and attributes, so a worker that
receives a copy can tell the operator's intent: the key matches the record's, and the job
runs again as ``sqsjobs dlq redrive`` would run it. Anyone allowed to send to a job queue
can write the copy mark and a body naming a dead job, but not the key, which only the
table and the DLQ hold; a message without the right key revives nothing. A revive clears
the key, so a copy of an earlier death never revives a later one.

Releases before 0.3 neither write nor request the key: their copies carry only the mark
and their workers delete a moved copy of a dead job, as they always did.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, NamedTuple

COPY_ATTRIBUTE = "sqsjobs.copy"
DEAD_LETTER_COPY = "dead-letter"
REVIVE_ATTRIBUTE = "sqsjobs.revive"
REVIVE_KEY = "revive_key"  # the record's attribute holding the key of its latest death
NAMES = [COPY_ATTRIBUTE, REVIVE_ATTRIBUTE]  # the message attributes a receive asks for


class Mark(NamedTuple):
    """What a received message's attributes say about where it came from."""

    copied: bool = False  # a copy the store sent to a DLQ
    revive_key: str | None = None  # the key of the death it is the copy of


def new_key() -> str:
    """A key for one death: 128 random bits, as hex."""
    return secrets.token_hex(16)


def copy_mark(key: str | None) -> dict[str, Any]:
    """The message attributes of a copy: the mark, and the death's key when it has one."""
    mark: dict[str, Any] = {COPY_ATTRIBUTE: {"DataType": "String", "StringValue": DEAD_LETTER_COPY}}
    if key is not None:
        mark[REVIVE_ATTRIBUTE] = {"DataType": "String", "StringValue": key}
    return mark


def read_mark(attributes: object, value_field: str = "StringValue") -> Mark:
    """The mark in a message's attributes, as ``ReceiveMessage`` spells them, or with
    ``value_field="stringValue"`` as a Lambda SQS event record does."""
    if not isinstance(attributes, Mapping):
        return Mark()
    copied = _value(attributes, COPY_ATTRIBUTE, value_field) == DEAD_LETTER_COPY
    key = _value(attributes, REVIVE_ATTRIBUTE, value_field) if copied else None
    return Mark(copied, key or None)


def _value(attributes: Mapping[str, Any], name: str, value_field: str) -> str | None:
    entry = attributes.get(name)
    value = entry.get(value_field) if isinstance(entry, Mapping) else None
    return value if isinstance(value, str) else None
