"""Pure builders for the DynamoDB requests that put, read, claim and hold a job's record.

Here are the put of a record, its read, the claim and heartbeat of a run and the note of
a re-send, and what every conditional write on a record is made of: the ``UpdateItem``
(``update``) and the clauses each status change writes (``status_change``). The status
changes that settle a run, end a job or revive one are built on them in ``transitions``.

Each builder returns a ``Call`` whose params are the matching ``mypy_boto3_dynamodb``
TypedDict. Condition expressions (``conditions``) are written from the status rules in
``sqsjobs.core.lifecycle``, so a record can only change the way the memory store changes
it; the conformance suite runs both stores to keep them in agreement.

Expressions name attributes as ``#attr`` (several are DynamoDB reserved words); the
``ExpressionAttributeNames`` map is derived from the text, so it cannot drift.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...core.lifecycle import DELAYED, QUEUED, RUNNING
from ...core.models import JobStatus
from .conditions import DUE_NOW, MAY_HEARTBEAT, TAKE_OVER, attribute_names
from .entries import Noted, note
from .index_keys import IndexedTable, home, index_pk, phase, shard
from .items import PROGRESS, Attributes, job_key, number, text
from .protocol import Call

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import (
        GetItemInputTypeDef,
        PutItemInputTypeDef,
        UpdateItemInputTypeDef,
    )


def statuses(*named: JobStatus) -> dict[str, dict[str, str]]:
    """The expression values ``:{status}`` that conditions compare ``#status`` with."""
    return {f":{s.value}": text(s.value) for s in named}


def update(
    table: str,
    job_id: str,
    *,
    sets: Mapping[str, str],
    condition: str,
    values: Mapping[str, Any],
    remove: Sequence[str] = (),
    returns: bool = False,
    sets_of: str = "",
) -> Call:
    """An ``UpdateItem``; on refusal the old item comes back (ALL_OLD) to explain why.

    ``sets_of``: an ``ADD`` or ``DELETE`` clause on a string set (``wire.waiting``).
    """
    clauses = []
    if sets:
        clauses.append("SET " + ", ".join(f"#{k} = {v}" for k, v in sets.items()))
    if remove:
        clauses.append("REMOVE " + ", ".join(f"#{k}" for k in remove))
    if sets_of:
        clauses.append(sets_of)
    expression = " ".join(clauses)
    params: UpdateItemInputTypeDef = {
        "TableName": table,
        "Key": job_key(job_id),
        "UpdateExpression": expression,
        "ConditionExpression": condition,
        "ExpressionAttributeNames": attribute_names(expression, condition),
        "ExpressionAttributeValues": dict(values),
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    if returns:
        params["ReturnValues"] = "ALL_NEW"
    return Call("dynamodb", "update_item", params)


def status_change(
    table: IndexedTable, job_id: str, status: JobStatus, now: float, *, queue: str | None = None
) -> tuple[dict[str, str], dict[str, Any]]:
    """The SET clauses and values every status change writes.

    ``phase`` is what the list index sees: unchanged (so no index write) unless the job
    ends or a dead one runs again. Those changes name the job's ``queue``, so that from
    record format 3 on (``table.moves``) they also move its entry to the partition of its
    new phase (``index_keys.home``). ``gsi_pk`` keeps a previous layout's record in its
    ``by_status`` partition; on a current record, which has no ``gsi_sk``, it is inert
    (so is ``list_pk`` on a record of 0.1, which has no ``list_sk``).
    """
    sets = {"status": ":new_status", "updated_at": ":now", "phase": ":phase", "gsi_pk": ":gsi_pk"}
    values = {
        ":new_status": text(status.value),
        ":now": number(now),
        ":phase": text(phase(status)),
        ":gsi_pk": text(index_pk(status, shard(job_id, table.shards))),
    }
    if queue is not None and table.moves:
        sets["list_pk"] = ":list_pk"
        values[":list_pk"] = text(home(queue, job_id, table.shards, status))
    return sets, values


def put_new(table: str, item: Attributes, now: float) -> Call:
    """Write a new record; refused (with the holder, ALL_OLD) if a live one has its id.

    An item under the key that is no record (no ``status``: what a bare ``UpdateItem``
    leaves, which a producer's grant allows on any ``job#`` key) is overwritten: it must
    not hold a predictable id (an idempotency key's, a cron tick's) against every put.
    """
    params: PutItemInputTypeDef = {
        "TableName": table,
        "Item": item,
        "ConditionExpression": (
            "attribute_not_exists(#pk) OR attribute_not_exists(#status) OR #expires_at <= :now"
        ),
        "ExpressionAttributeNames": {"#pk": "pk", "#status": "status", "#expires_at": "expires_at"},
        "ExpressionAttributeValues": {":now": number(now)},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    return Call("dynamodb", "put_item", params)


def transact_write(entries: Sequence[Mapping[str, Any]], token: str) -> Call:
    """One ``TransactWriteItems``; ``token`` makes a retry of it (its answer lost) a no-op."""
    params = {"TransactItems": list(entries), "ClientRequestToken": token}
    return Call("dynamodb", "transact_write_items", params)


def claim(
    table: IndexedTable,
    job_id: str,
    queue: str,
    worker_id: str,
    token: str,
    now: float,
    skew: float,
    over: tuple[str, Noted] | None = None,
) -> Call:
    """Lease the job to ``worker_id`` for the lease *of record* (``lease_until = now + lease``).

    The lease is never taken from the message: whoever may send to the queue could
    otherwise shorten a run's lease to nothing. A claim takes a waiting job; ``over``
    (the token whose lease ran out, and the history entry that says so) takes over a
    running one whose lease is over with attempts left, as a claim refused by it found.
    """
    sets, values = status_change(table, job_id, RUNNING, now)
    sets |= {
        "attempts": "#attempts + :one",
        "locked_by": ":worker",
        "lease_token": ":token",
        "lease_until": "#lease + :now",
    }
    values |= {
        ":one": number(1),
        ":worker": text(worker_id),
        ":token": text(token),
        ":queue": text(queue),
    }
    if over is None:  # a debounced job's slot is merged first (``flows.debounce``)
        values |= statuses(QUEUED, DELAYED)
        condition = f"#queue = :queue AND ({DUE_NOW}) AND attribute_not_exists(#debounce_slot)"
    else:
        values |= statuses(RUNNING) | {
            ":old_token": text(over[0]),
            ":lease_ended_before": number(now - skew),
        }
        condition = f"#queue = :queue AND {TAKE_OVER}"
        note(sets, values, over[1])
    return update(table.name, job_id, sets=sets, condition=condition, values=values, returns=True)


def heartbeat(
    table: str, job_id: str, token: str, lease_until: float, now: float, progress: str | None
) -> Call:
    values = statuses(RUNNING) | {
        ":token": text(token),
        ":now": number(now),
        ":lease_until": number(lease_until),
    }
    sets = {"lease_until": ":lease_until", "updated_at": ":now"}
    ride_progress(sets, values, progress)
    return update(table, job_id, sets=sets, condition=MAY_HEARTBEAT, values=values)


def ride_progress(sets: dict[str, str], values: dict[str, Any], progress: str | None) -> None:
    """Add a run's latest progress (JSON text, ``core.progress``) to a write under its
    lease: kept as ``progress``, never a write of its own."""
    if progress is not None:
        sets[PROGRESS] = ":progress"
        values[":progress"] = text(progress)


def get(table: str, job_id: str) -> Call:
    params: GetItemInputTypeDef = {
        "TableName": table,
        "Key": job_key(job_id),
        "ConsistentRead": True,
    }
    return Call("dynamodb", "get_item", params)


def mark_resent(
    table: str, job_id: str, updated_at: float, resent_at: float | None, now: float
) -> Call:
    """Note a re-send, if the record has not moved since it was read.

    ``updated_at`` and ``resent_at`` are the stored numbers (``Stored``), never values
    that went through a datetime. Every status change and heartbeat writes
    ``updated_at``, so finding it unchanged is finding the status unchanged; the request
    names no ``status`` at all, so that the producers' IAM grant for it (which must list
    every attribute a request names, compared or set: ``dynamodb:Attributes``) cannot
    change a status. Conditioning on ``resent_at`` too makes re-senders that read the
    same record (the reconciler, duplicate producers) send once between them: the first
    write changes it and the others are refused.
    """
    values = {":updated_at": number(updated_at), ":now": number(now)}
    if resent_at is None:
        unsent = "attribute_not_exists(#resent_at)"
    else:
        unsent = "#resent_at = :resent_at"
        values[":resent_at"] = number(resent_at)
    return update(
        table,
        job_id,
        sets={"resent_at": ":now"},
        condition=f"attribute_exists(#pk) AND #updated_at = :updated_at AND {unsent}",
        values=values,
    )
