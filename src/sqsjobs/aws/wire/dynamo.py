"""Pure builders for every DynamoDB request the store makes.

Each returns a ``Call`` whose params are the matching ``mypy_boto3_dynamodb`` TypedDict.
Condition expressions (``conditions``) are written from the status rules in
``sqsjobs.core.lifecycle``, so a record can only change the way the memory store changes it;
the conformance suite runs both stores to keep them in agreement.

Expressions name attributes as ``#attr`` (several are DynamoDB reserved words); the
``ExpressionAttributeNames`` map is derived from the text, so it cannot drift.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...core.lifecycle import CANCELLABLE, DEAD, DELAYED, QUEUED, RUNNING
from ...core.models import JobStatus
from .conditions import (
    ABANDONED,
    CLAIMABLE,
    HOLDS_LEASE,
    LEASE_ENDED_ON_LAST_ATTEMPT,
    MAY_HEARTBEAT,
    REVIVABLE,
    attribute_names,
)
from .items import OPEN, Attributes, IndexedTable, index_pk, job_key, number, phase, shard, text
from .protocol import Call

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import (
        GetItemInputTypeDef,
        PutItemInputTypeDef,
        UpdateItemInputTypeDef,
    )

LEASE_FIELDS = ("locked_by", "lease_token", "lease_until")
# On a dead record whose DLQ copy is still to be sent: when it died. Its index phase stays
# ``open`` meanwhile, so the reconciler, which reads open entries, finds it if the copy
# never went (a crash between the two, SQS failing): see ``flows.settle``.
COPY_DUE = "copy_due"
Due = tuple[JobStatus, float]  # a status to wait in and its run_at


def _statuses(*statuses: JobStatus) -> dict[str, dict[str, str]]:
    return {f":{s.value}": text(s.value) for s in statuses}


def _update(
    table: str,
    job_id: str,
    *,
    sets: Mapping[str, str],
    condition: str,
    values: Mapping[str, Any],
    remove: Sequence[str] = (),
    returns: bool = False,
) -> Call:
    """An ``UpdateItem``; on refusal the old item comes back (ALL_OLD) to explain why."""
    expression = "SET " + ", ".join(f"#{k} = {v}" for k, v in sets.items())
    if remove:
        expression += " REMOVE " + ", ".join(f"#{k}" for k in remove)
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


def _status_change(
    job_id: str, shards: int, status: JobStatus, now: float
) -> tuple[dict[str, str], dict[str, Any]]:
    """The SET clauses and values every status change writes.

    ``phase`` is what the list index sees: unchanged (so no index write) unless the job
    ends or a dead one runs again. ``gsi_pk`` keeps a previous layout's record in its
    ``by_status`` partition; on a current record, which has no ``gsi_sk``, it is inert.
    """
    sets = {"status": ":new_status", "updated_at": ":now", "phase": ":phase", "gsi_pk": ":gsi_pk"}
    values = {
        ":new_status": text(status.value),
        ":now": number(now),
        ":phase": text(phase(status)),
        ":gsi_pk": text(index_pk(status, shard(job_id, shards))),
    }
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


def claim(
    table: IndexedTable,
    job_id: str,
    queue: str,
    worker_id: str,
    token: str,
    now: float,
    skew: float,
) -> Call:
    """Lease the job to ``worker_id`` for the lease *of record* (``lease_until = now + lease``).

    The lease is never taken from the message: whoever may send to the queue could
    otherwise shorten a run's lease to nothing.
    """
    sets, values = _status_change(job_id, table.shards, RUNNING, now)
    sets |= {
        "attempts": "#attempts + :one",
        "locked_by": ":worker",
        "lease_token": ":token",
        "lease_until": "#lease + :now",
    }
    values |= _statuses(QUEUED, DELAYED, RUNNING) | {
        ":one": number(1),
        ":worker": text(worker_id),
        ":token": text(token),
        ":queue": text(queue),
        ":expired_before": number(now - skew),
    }
    condition = f"#queue = :queue AND ({CLAIMABLE})"
    return _update(table.name, job_id, sets=sets, condition=condition, values=values, returns=True)


def _copy_due(sets: dict[str, str], values: dict[str, Any], now: float) -> None:
    """Mark a dead write's record as still owing its DLQ copy (``COPY_DUE``)."""
    sets[COPY_DUE] = ":now"
    values[":phase"] = text(OPEN)


def expire_lease(
    table: IndexedTable,
    job_id: str,
    token: str,
    error: str,
    now: float,
    skew: float,
    expires_at: float,
    *,
    copy: bool = False,
) -> Call:
    """Dead-letter a job whose lease (``token``) ended on its final attempt.

    ``copy``: its message goes to a DLQ next (``COPY_DUE`` until ``copied``).
    """
    sets, values = _status_change(job_id, table.shards, DEAD, now)
    sets |= {"last_error": ":error", "expires_at": ":expires_at"}
    if copy:
        _copy_due(sets, values, now)
    values |= _statuses(RUNNING) | {
        ":expired_before": number(now - skew),
        ":token": text(token),
        ":error": text(error),
        ":expires_at": number(expires_at),
    }
    return _update(
        table.name,
        job_id,
        sets=sets,
        condition=LEASE_ENDED_ON_LAST_ATTEMPT,
        values=values,
        remove=LEASE_FIELDS,
        returns=True,
    )


def heartbeat(table: str, job_id: str, token: str, lease_until: float, now: float) -> Call:
    values = _statuses(RUNNING) | {
        ":token": text(token),
        ":now": number(now),
        ":lease_until": number(lease_until),
    }
    return _update(
        table,
        job_id,
        sets={"lease_until": ":lease_until", "updated_at": ":now"},
        condition=MAY_HEARTBEAT,
        values=values,
    )


def complete(
    table: IndexedTable, job_id: str, token: str, now: float, result: str | None, expires_at: float
) -> Call:
    sets, values = _status_change(job_id, table.shards, JobStatus.COMPLETED, now)
    sets |= {"completed_at": ":now", "expires_at": ":expires_at"}
    values |= _statuses(RUNNING) | {":token": text(token), ":expires_at": number(expires_at)}
    remove: tuple[str, ...] = LEASE_FIELDS
    if result is None:
        remove += ("result",)
    else:
        sets["result"] = ":result"
        values[":result"] = text(result)
    return _update(
        table.name, job_id, sets=sets, condition=HOLDS_LEASE, values=values, remove=remove
    )


def retry(
    table: IndexedTable,
    job_id: str,
    token: str,
    error: str,
    status: JobStatus,
    run_at: float,
    now: float,
) -> Call:
    """``after_failure`` chose to retry: waiting again under ``status`` until ``run_at``."""
    sets, values = _status_change(job_id, table.shards, status, now)
    sets |= {"run_at": ":run_at", "last_error": ":error"}
    values |= _statuses(RUNNING) | {
        ":token": text(token),
        ":run_at": number(run_at),
        ":error": text(error),
    }
    return _update(
        table.name, job_id, sets=sets, condition=HOLDS_LEASE, values=values, remove=LEASE_FIELDS
    )


def dead(
    table: IndexedTable,
    job_id: str,
    token: str,
    error: str,
    now: float,
    expires_at: float,
    *,
    copy: bool = False,
) -> Call:
    """A failure with no retry left; ``copy``: its DLQ copy is sent next (``COPY_DUE``)."""
    sets, values = _status_change(job_id, table.shards, DEAD, now)
    sets |= {"run_at": ":now", "last_error": ":error", "expires_at": ":expires_at"}
    if copy:
        _copy_due(sets, values, now)
    values |= _statuses(RUNNING) | {
        ":token": text(token),
        ":error": text(error),
        ":expires_at": number(expires_at),
    }
    return _update(
        table.name, job_id, sets=sets, condition=HOLDS_LEASE, values=values, remove=LEASE_FIELDS
    )


def release(table: IndexedTable, job_id: str, token: str, error: str, now: float, due: Due) -> Call:
    """Queued again, or delayed (a deferred start): ``due`` is ``after_release``'s status
    and ``run_at``; the interrupted or deferred attempt is not counted."""
    status, run_at = due
    sets, values = _status_change(job_id, table.shards, status, now)
    sets |= {"attempts": "#attempts - :one", "run_at": ":run_at", "last_error": ":error"}
    values |= _statuses(RUNNING) | {
        ":token": text(token),
        ":one": number(1),
        ":error": text(error),
        ":run_at": number(run_at),
    }
    return _update(
        table.name, job_id, sets=sets, condition=HOLDS_LEASE, values=values, remove=LEASE_FIELDS
    )


def cancel(table: IndexedTable, job_id: str, now: float, expires_at: float) -> Call:
    sets, values = _status_change(job_id, table.shards, JobStatus.CANCELLED, now)
    sets["expires_at"] = ":expires_at"
    cancellable = sorted(CANCELLABLE)
    values |= _statuses(*cancellable) | {":expires_at": number(expires_at)}
    condition = f"#status IN ({', '.join(f':{s.value}' for s in cancellable)})"
    return _update(
        table.name, job_id, sets=sets, condition=condition, values=values, remove=LEASE_FIELDS
    )


def abandoned_dead(
    table: IndexedTable, job_id: str, error: str, now: float, skew: float, expires_at: float
) -> Call:
    """Dead-letter a job whose runs kept dying: its message reached the DLQ by redrive.

    Only a running record with its lease over qualifies. A waiting one is left alone: its
    redriven message may be a stray duplicate, and if it was the only one, the
    reconciler's stale pass sends a fresh one.
    """
    sets, values = _status_change(job_id, table.shards, DEAD, now)
    sets |= {"last_error": ":error", "expires_at": ":expires_at"}
    values |= _statuses(RUNNING) | {
        ":error": text(error),
        ":expires_at": number(expires_at),
        ":expired_before": number(now - skew),
    }
    return _update(
        table.name,
        job_id,
        sets=sets,
        condition=ABANDONED,
        values=values,
        remove=LEASE_FIELDS,
        returns=True,
    )


def copied(table: IndexedTable, job_id: str, due: float) -> Call:
    """The DLQ copy of a dead record (dead since ``due``) was sent: it ends in the index.

    Conditional on the same death, so a copy confirmed late never touches a job that
    has since run again (or died again, with a copy of its own still to come).
    """
    values = _statuses(DEAD) | {":due": number(due), ":phase": text(phase(DEAD))}
    return _update(
        table.name,
        job_id,
        sets={"phase": ":phase"},
        condition=f"#status = :dead AND #{COPY_DUE} = :due",
        values=values,
        remove=(COPY_DUE,),
    )


def revive(table: IndexedTable, job_id: str, queues: Sequence[str], now: float) -> Call:
    """Run a dead job again: queued now, attempts reset, retention and lease cleared.

    ``last_error`` stays, so the record still says why it died. The condition names the
    queues the caller can send to, so a job it could not deliver is never revived.
    """
    sets, values = _status_change(job_id, table.shards, QUEUED, now)
    sets |= {"attempts": ":zero", "run_at": ":now"}
    names = [f":queue{i}" for i in range(len(queues))]
    values |= _statuses(DEAD) | {":zero": number(0)}
    values |= {name: text(queue) for name, queue in zip(names, queues, strict=True)}
    condition = f"{REVIVABLE} AND #queue IN ({', '.join(names)})"
    return _update(
        table.name,
        job_id,
        sets=sets,
        condition=condition,
        values=values,
        remove=(*LEASE_FIELDS, "expires_at", "resent_at", COPY_DUE),
        returns=True,
    )


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
    return _update(
        table,
        job_id,
        sets={"resent_at": ":now"},
        condition=f"attribute_exists(#pk) AND #updated_at = :updated_at AND {unsent}",
        values=values,
    )
