"""The DynamoDB item schema: keys and the explicit Job <-> item codec.

One item per job, keyed ``pk = "job#{id}"``. Payload and result are JSON text (``S``),
so the codec never meets ``Decimal``; instants are epoch seconds (``N``). A job with an
idempotency key gets a deterministic id (``keyed_id``), so the conditional ``PutItem``
that writes it also finds, and returns via ALL_OLD, the record already holding the key:
no read on either path.

The list index (``by_queue``, and the previous layout's ``by_status``) and its keys are in
``index_keys``.

A payload longer than ``INLINE_PAYLOAD_BYTES`` of JSON text is compressed (zlib); if
that fits, the record keeps it as ``payload_z`` (binary). Otherwise it is written once,
before the record, in an item of its own (``pk = "body#{id}#{nonce}"``, ``z`` the
compressed text, or ``p`` the text where compressing saves nothing, ``expires_at`` its
TTL), and the record keeps ``body_pk`` (that key) and ``body_until`` (that TTL) instead
of ``payload``. The nonce is new for every put, so the unconditional body write of a put
that is then refused (a duplicate, a conflicting reuse of a key) can never touch the
body of the job holding the key. Every
status change rewrites the whole record and bills its size, so a record without its
payload costs one write unit per change whatever the payload's size, and claims read
the body (``flows.bodies``). A body lives ``BODY_LIFE`` past the job's ``run_at`` plus
the dead-letter retention, and is extended only for a job still alive close to that.

``expires_at`` is the table's TTL attribute, set on terminal records only. DynamoDB
deletes lazily (up to days late), so every reader treats ``expires_at <= now`` as absent.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import zlib
from decimal import Decimal
from typing import Any, NamedTuple

from ...core.errors import JobStoreError, describe_error
from ...core.fields import DATA_FIELDS
from ...core.lifecycle import past_retention
from ...core.models import Job, JobStatus, constructed_job
from ...core.text import safe_line
from ...core.times import epoch, utc, utc_or_none
from ...core.validation import dump_json
from .copy_marks import REVIVE_KEY
from .entries import history_of
from .index_keys import OPEN, index_pk, index_sk, list_pk, list_sk, shard
from .traces import unpacked_trace

Attributes = dict[str, Any]

TTL_ATTRIBUTE = "expires_at"
RESENT_AT = "resent_at"  # when the reconciler or a duplicate producer last re-sent a message
# A run's latest progress (``core.progress``), compact JSON text, written by its heartbeats
# and its outcome. Releases before it ignore the attribute.
PROGRESS = "progress"
# Jobs that wait for others (``wire.waiting``): on a waiting record, the parents it still
# waits for; on a parent, the jobs that wait for it. String sets; releases before them
# ignore both.
AWAITING = "awaiting"
CHILDREN = "children"
# A batch job's shard of its batch's counts; and, once its end was counted there, how it
# ended (``flows.batches``).
BATCH_SHARD = "batch_shard"
BATCH_COUNTED = "batch_counted"
# The record format this release writes by default, and every one it reads. Format 1 is
# what 0.1 releases write and read: the payload inline, the keys of ``by_status``. Format
# 2 adds what they cannot read (compressed payloads, body items) and writes ``by_queue``
# keys only. A store asked for format 1 (``SqsJobStore(record_format=1)``, during a
# rolling upgrade from 0.1) writes records both releases read: format 1's attributes and
# ``by_queue``'s keys besides, so that readers of this release find them there.
#
# Format 3 moves an ending job's index entry out of its open partition (``index_keys``),
# where readers of 0.2 releases would no longer find it; otherwise it is format 2.
RECORD_FORMAT = 3
RECORD_FORMATS = (1, 2, 3)
MOVES_ENDED = 3  # the first record format whose ending writes move the index entry
# The first whose records may wait for others (status ``waiting``, ``awaiting``,
# ``children``): 0.2 releases, which read format 2, know no such status.
WAITS = 3
ITEM_VERSION = RECORD_FORMAT
INLINE_PAYLOAD_BYTES = 512  # longer payloads go to a body item: the record stays within 1 KB
BODY_PREFIX = "body#"
PAYLOAD_Z = "payload_z"  # a long payload, compressed, kept in the record (binary)
DEBOUNCE_SLOT = "debounce_slot"  # a debounced job's slot, until a claim merges it
PACK_LEVEL = 6  # zlib's default: about 20 us per KB of JSON
BODY_LIFE = 30 * 86_400.0  # a body outlives its job's run_at by this plus dead retention
BODY_EXTEND_WITHIN = 15 * 86_400.0  # a claim extends a body with less than this (plus it) left


def job_pk(job_id: str) -> str:
    return f"job#{job_id}"


def job_key(job_id: str) -> Attributes:
    return {"pk": {"S": job_pk(job_id)}}


def body_key(body_pk: str) -> Attributes:
    return {"pk": {"S": body_pk}}


def new_body_pk(job_id: str) -> str:
    """A fresh key for the body of one put of ``job_id`` (see the module docstring)."""
    return f"{BODY_PREFIX}{job_id}#{secrets.token_hex(8)}"


def former_body_pk(job_id: str) -> str:
    """Where records without ``body_pk`` (written before bodies had nonces) keep theirs."""
    return f"{BODY_PREFIX}{job_id}"


def is_long(payload_text: str) -> bool:
    """Whether a payload is too long to keep in the record as it is."""
    return len(payload_text) > INLINE_PAYLOAD_BYTES // 4 and (
        len(payload_text.encode()) > INLINE_PAYLOAD_BYTES
    )


def packed(payload_text: str) -> bytes:
    """The payload's text compressed: JSON usually shrinks to a third or less."""
    return zlib.compress(payload_text.encode(), PACK_LEVEL)


def body_item(body_pk: str, payload_text: str, until: float) -> Attributes:
    """A body: the text compressed, or as it is when compressing saves nothing."""
    squeezed, plain = packed(payload_text), payload_text.encode()
    value = {"z": {"B": squeezed}} if len(squeezed) < len(plain) else {"p": text(payload_text)}
    return {**body_key(body_pk), **value, TTL_ATTRIBUTE: number(until)}


def payload_text(item: Attributes) -> str:
    """A record's or a body's payload text: plain (``payload``, ``p``) or compressed."""
    for plain in ("payload", "p"):
        if plain in item:
            return str(item[plain]["S"])
    for squeezed in (PAYLOAD_Z, "z"):
        if squeezed in item:
            return zlib.decompress(bytes(item[squeezed]["B"])).decode()
    raise KeyError("payload")


def keyed_id(queue: str, tenant: str | None, idempotency_key: str) -> str:
    """The id every job with this ``(queue, tenant, key)`` gets, so one write finds the holder.

    The triple is hashed as a JSON array: its quoting keeps the parts apart whatever they
    contain, and no tenant (``null``) differs from every tenant id, ``"null"`` included.
    """
    scope = json.dumps([queue, tenant, idempotency_key], separators=(",", ":"))
    return hashlib.sha256(scope.encode()).hexdigest()[:32]


def number(value: float | int) -> dict[str, str]:
    """A DynamoDB number: plain decimal text (no exponent), exact for any float."""
    if isinstance(value, int):
        return {"N": str(value)}
    shortest = repr(float(value))  # what reads back as the same float
    if "e" in shortest or "n" in shortest:  # an exponent (or inf, nan): spelled out
        shortest = format(Decimal(shortest), "f")
    return {"N": shortest}


def text(value: str) -> dict[str, str]:
    return {"S": value}


def same_value(stored: Any, written: Any) -> bool:
    """Two attribute values compared as DynamoDB compares them: numbers by value (it may
    hand back ``"30"`` for the ``"30.0"`` it was sent). Used to recognise our own write
    in the item a retried conditional update was refused by."""
    if isinstance(stored, dict) and isinstance(written, dict) and "N" in stored and "N" in written:
        return Decimal(str(stored["N"])) == Decimal(str(written["N"]))
    return bool(stored == written)


class Stored(NamedTuple):
    """A record as read from the table: the job plus what only the store needs.

    The instants are the stored numbers themselves. ``Job`` carries datetimes, which
    keep microseconds, and about three in four ``time.time()`` values have digits beyond
    that (``1796094741.2439704`` comes back as ``…741.24397``): a condition written from
    a datetime would not match the stored value, and judging due-ness or lease expiry
    from one could disagree with the condition that DynamoDB evaluates. So every rule
    and every condition about a stored instant reads these.
    """

    job: Job
    fingerprint: str | None
    expires_at: float | None
    run_at: float
    updated_at: float
    lease_until: float | None
    resent_at: float | None = None
    body_until: float | None = None  # the payload is in a body item, alive until then
    body_pk: str | None = None  # that body item's key
    copy_due: float | None = None  # dead since then, its DLQ copy not yet confirmed sent
    revive_key: str | None = None  # the key its latest death's DLQ copy carries
    batch_shard: int | None = None  # a batch job's shard of its batch's counts (``batches``)
    awaiting: tuple[str, ...] = ()  # a waiting job's parents not yet completed
    children: tuple[str, ...] = ()  # the jobs waiting for this one (``wire.waiting``)
    debounce_slot: str | None = None  # may hold a newer payload (``wire.debounce``)

    @property
    def needs_payload(self) -> bool:
        """The payload is in a body item, not yet read into ``job``."""
        return self.body_until is not None and self.job.payload is None

    def with_payload(self, payload_text: str) -> Stored:
        job = self.job.model_copy(update={"payload": json.loads(payload_text)})
        return self._replace(job=job)

    def past_retention(self, now: float) -> bool:
        return past_retention(self.expires_at, now)


def item_from_job(
    job: Job,
    fingerprint: str | None,
    shards: int,
    body: tuple[str, float] | None = None,
    squeezed: bytes | None = None,
    *,
    record_format: int = RECORD_FORMAT,
) -> Attributes:
    """The item ``put`` writes for a new job (never leased, never terminal).

    With ``body`` (its key and its TTL) the payload is left out: it is in that body
    item; with ``squeezed`` it is kept compressed. ``record_format`` 1 adds the keys of
    the previous layout's ``by_status``, where 0.1 readers look (``RECORD_FORMATS``).
    """
    created = epoch(job.created_at)
    item: Attributes = {
        **job_key(job.id),
        "v": number(record_format),
        "id": text(job.id),
        "queue": text(job.queue),
        "name": text(job.name),
        "payload": text(dump_json(job.payload)),
        "status": text(job.status.value),
        "attempts": number(job.attempts),
        "max_attempts": number(job.max_attempts),
        "run_at": number(epoch(job.run_at)),
        "created_at": number(created),
        "updated_at": number(epoch(job.updated_at)),
        "lease": number(job.lease),
        "timeout": number(job.timeout),
        "priority": number(job.priority),
        "list_pk": text(list_pk(job.queue, shard(job.id, shards))),
        "list_sk": text(list_sk(created, job.id)),
        "phase": text(OPEN),
    }
    if record_format == 1:
        item["gsi_pk"] = text(index_pk(job.status, shard(job.id, shards)))
        item["gsi_sk"] = text(index_sk(job.queue, created, job.id))
    if body is not None:
        del item["payload"]
        item["body_pk"] = text(body[0])
        item["body_until"] = number(body[1])
    elif squeezed is not None:
        del item["payload"]
        item[PAYLOAD_Z] = {"B": squeezed}
    if job.timeout_explicit:  # absent (older items too) means False
        item["timeout_explicit"] = {"BOOL": True}
    for name, value in (
        ("idempotency_key", job.idempotency_key),
        ("tenant", job.tenant),
        ("group", job.group),
        ("fingerprint", fingerprint),
        ("trace_context", None if job.trace_context is None else json.dumps(job.trace_context)),
        (PROGRESS, None if job.progress is None else dump_json(job.progress)),
        ("batch_id", job.batch_id),
        ("batch_callback", job.batch_callback),
        ("debounce_key", job.debounce_key),
    ):
        if value is not None:
            item[name] = text(value)
    for field in DATA_FIELDS:  # compact JSON text, left out when empty (``core.fields``)
        value = getattr(job, field.name)
        if value != field.empty:
            item[field.name] = text(dump_json(value))
    return item


# What decoding an item that was not written by this module can raise.
UNDECODABLE = (KeyError, ValueError, TypeError, ArithmeticError)


def is_record(item: Attributes) -> bool:
    """Whether ``item`` is a job's record, rather than what a bare ``UpdateItem`` of a
    ``job#`` key leaves (the key and the attributes it set, nothing a record needs)."""
    return "status" in item and "id" in item


def readable(item: Attributes, operation: str) -> Stored:
    """The record in ``item``; an item under a job's key that does not decode is the
    store's failure (``JobStoreError``, not retryable), never a ``KeyError``."""
    try:
        return stored_from_item(item)
    except UNDECODABLE as error:
        key = safe_line(str(item.get("pk", {}).get("S", "?")))
        message = f"{key} is no record this release can read ({describe_error(error)})"
        raise JobStoreError(operation, "UnreadableRecord", message, retryable=False) from None


def stored_from_item(item: Attributes) -> Stored:
    """Decode an item written by this module (raises ``KeyError``/``ValueError`` if not)."""
    history, history_count = history_of(item)  # none on records of earlier releases
    job = constructed_job(
        id=_s(item, "id"),
        queue=_s(item, "queue"),
        name=_s(item, "name"),
        payload=None if "body_until" in item else json.loads(payload_text(item)),
        status=JobStatus(_s(item, "status")),
        attempts=_i(item, "attempts"),
        max_attempts=_i(item, "max_attempts"),
        run_at=utc(_n(item, "run_at")),
        created_at=utc(_n(item, "created_at")),
        updated_at=utc(_n(item, "updated_at")),
        lease_until=utc_or_none(_opt_n(item, "lease_until")),
        locked_by=_opt_s(item, "locked_by"),
        lease_token=_opt_s(item, "lease_token"),
        lease=_n(item, "lease"),
        timeout=_n(item, "timeout"),
        priority=_i(item, "priority"),
        idempotency_key=_opt_s(item, "idempotency_key"),
        tenant=_opt_s(item, "tenant"),
        last_error=_opt_s(item, "last_error"),
        completed_at=utc_or_none(_opt_n(item, "completed_at")),
        result=None if "result" not in item else json.loads(_s(item, "result")),
        timeout_explicit=bool(item.get("timeout_explicit", {}).get("BOOL", False)),
        group=_opt_s(item, "group"),  # absent on records written before groups
        trace_context=json.loads(item["trace_context"]["S"]) if "trace_context" in item else None,
        last_traceback=unpacked_trace(item, _opt_s(item, "last_error")),
        history=history,
        history_count=history_count,
        progress=json.loads(_s(item, PROGRESS)) if PROGRESS in item else None,
        children=list(string_set(item, CHILDREN)),
        batch_id=_opt_s(item, "batch_id"),
        batch_callback=_opt_s(item, "batch_callback"),
        debounce_key=_opt_s(item, "debounce_key"),
        **{f.name: json.loads(_s(item, f.name)) for f in DATA_FIELDS if f.name in item},
    )
    return Stored(
        job,
        _opt_s(item, "fingerprint"),
        _opt_n(item, TTL_ATTRIBUTE),
        run_at=_n(item, "run_at"),
        updated_at=_n(item, "updated_at"),
        lease_until=_opt_n(item, "lease_until"),
        resent_at=_opt_n(item, RESENT_AT),
        body_until=_opt_n(item, "body_until"),
        body_pk=_body_pk(item, job.id),
        copy_due=_opt_n(item, "copy_due"),
        revive_key=_opt_s(item, REVIVE_KEY),
        batch_shard=_opt_i(item, BATCH_SHARD),
        awaiting=string_set(item, AWAITING),
        children=string_set(item, CHILDREN),
        debounce_slot=_opt_s(item, DEBOUNCE_SLOT),
    )


def string_set(item: Attributes, name: str) -> tuple[str, ...]:
    """A string set attribute's members, sorted; none when the attribute is absent."""
    return tuple(sorted(item.get(name, {}).get("SS", ())))


def _body_pk(item: Attributes, job_id: str) -> str | None:
    if "body_until" not in item:
        return None
    return _opt_s(item, "body_pk") or former_body_pk(job_id)


def _s(item: Attributes, name: str) -> str:
    return str(item[name]["S"])


def _n(item: Attributes, name: str) -> float:
    return float(item[name]["N"])


def _i(item: Attributes, name: str) -> int:
    """An integer attribute, parsed exactly (through float, 2**53 + 1 would change)."""
    value = Decimal(str(item[name]["N"]))
    if value != value.to_integral_value():
        raise ValueError(f"attribute {name!r} is {value}, not an integer")
    return int(value)


def _opt_s(item: Attributes, name: str) -> str | None:
    return _s(item, name) if name in item else None


def _opt_n(item: Attributes, name: str) -> float | None:
    return _n(item, name) if name in item else None


def _opt_i(item: Attributes, name: str) -> int | None:
    return _i(item, name) if name in item else None
