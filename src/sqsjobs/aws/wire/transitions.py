"""Pure builders for the status changes that settle a run, end a job or revive one.

A run settles under its lease token (``complete``, ``retry``, ``release``, ``dead``); a
job ends without one when its lease ran out on the last attempt (``dead_at_lease_end``), its
runs kept dying (``abandoned_dead``) or it is cancelled while waiting (``cancel``); a dead
one is confirmed copied to its DLQ (``copied``) or runs again (``revive``). These are the
writes that take a lease away and move a job's list-index entry between its open and
ended partitions (``index_keys.home``), or keep it open while a DLQ copy is owed
(``COPY_DUE``). They are kept apart from the writes that put, read, claim and hold a
record (``dynamo``), whose ``update`` and ``status_change`` they are built on; like
those, their conditions (``conditions``) are the status rules of ``sqsjobs.core.lifecycle``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...core.lifecycle import CANCELLABLE, DEAD, QUEUED, RUNNING
from ...core.models import JobStatus
from .conditions import ABANDONED, HOLDS_LEASE, LEASE_ENDED_ON_LAST_ATTEMPT, REVIVABLE
from .copy_marks import REVIVE_KEY
from .dynamo import ride_progress, status_change, statuses, update
from .entries import Noted, note
from .index_keys import OPEN, IndexedTable, home, phase
from .items import number, text
from .protocol import Call
from .traces import error_write

LEASE_FIELDS = ("locked_by", "lease_token", "lease_until")
# On a dead record whose DLQ copy is still to be sent: when it died. Its index phase stays
# ``open`` meanwhile, so the reconciler, which reads open entries, finds it if the copy
# never went (a crash between the two, SQS failing): see ``flows.settle``.
COPY_DUE = "copy_due"
Due = tuple[JobStatus, float]  # a status to wait in and its run_at


def _copy_due(sets: dict[str, str], values: dict[str, Any], now: float, key: str) -> None:
    """Mark a dead write's record as still owing its DLQ copy (``COPY_DUE``): its entry
    stays open until ``copied``. ``key``: the death's, which its copy carries
    (``copy_marks``)."""
    sets[COPY_DUE] = ":now"
    sets[REVIVE_KEY] = ":revive_key"
    values[":revive_key"] = text(key)
    values[":phase"] = text(OPEN)
    if sets.pop("list_pk", None) is not None:
        del values[":list_pk"]


def dead_at_lease_end(
    table: IndexedTable,
    job: tuple[str, str],
    token: str,
    error: str,
    now: float,
    skew: float,
    expires_at: float,
    *,
    copy_key: str | None = None,
    noted: Noted | None = None,
) -> Call:
    """Dead-letter a job (its id and queue) whose lease (``token``) ended on its final
    attempt. ``copy_key``: its message goes to a DLQ next, with this key (``COPY_DUE``
    until ``copied``); ``noted``: the history entry this write adds (``entries``), here
    and below.
    """
    job_id, queue = job
    sets, values = status_change(table, job_id, DEAD, now, queue=queue)
    sets["expires_at"] = ":expires_at"
    remove = error_write(sets, values, LEASE_FIELDS, error)
    if copy_key is not None:
        _copy_due(sets, values, now, copy_key)
    values |= statuses(RUNNING) | {
        ":lease_ended_before": number(now - skew),
        ":token": text(token),
        ":expires_at": number(expires_at),
    }
    note(sets, values, noted)
    return update(
        table.name,
        job_id,
        sets=sets,
        condition=LEASE_ENDED_ON_LAST_ATTEMPT,
        values=values,
        remove=remove,
        returns=True,
    )


def complete(
    table: IndexedTable,
    job: tuple[str, str | None],
    token: str,
    now: float,
    result: str | None,
    expires_at: float,
    noted: Noted | None = None,
    *,
    progress: str | None = None,
) -> Call:
    """The run under ``token`` succeeded: ``job`` is its id and queue; ``progress``: the
    run's latest, as JSON text (``ride_progress``), here and in the other outcomes."""
    job_id, queue = job
    sets, values = status_change(table, job_id, JobStatus.COMPLETED, now, queue=queue)
    sets |= {"completed_at": ":now", "expires_at": ":expires_at"}
    values |= statuses(RUNNING) | {":token": text(token), ":expires_at": number(expires_at)}
    remove: tuple[str, ...] = LEASE_FIELDS
    if result is None:
        remove += ("result",)
    else:
        sets["result"] = ":result"
        values[":result"] = text(result)
    note(sets, values, noted)
    ride_progress(sets, values, progress)
    return update(
        table.name,
        job_id,
        sets=sets,
        condition=HOLDS_LEASE,
        values=values,
        remove=remove,
        returns=True,  # its children, if any, are settled next (``flows.waiting``)
    )


def retry(
    table: IndexedTable,
    job_id: str,
    token: str,
    error: str,
    status: JobStatus,
    run_at: float,
    now: float,
    noted: Noted | None = None,
    *,
    progress: str | None = None,
) -> Call:
    """``after_failure`` chose to retry: waiting again under ``status`` until ``run_at``."""
    sets, values = status_change(table, job_id, status, now)
    sets["run_at"] = ":run_at"
    remove = error_write(sets, values, LEASE_FIELDS, error)
    values |= statuses(RUNNING) | {":token": text(token), ":run_at": number(run_at)}
    note(sets, values, noted)
    ride_progress(sets, values, progress)
    return update(
        table.name, job_id, sets=sets, condition=HOLDS_LEASE, values=values, remove=remove
    )


def dead(
    table: IndexedTable,
    job: tuple[str, str],
    token: str,
    error: str,
    now: float,
    expires_at: float,
    *,
    copy_key: str | None = None,
    noted: Noted | None = None,
    progress: str | None = None,
) -> Call:
    """A failure with no retry left (``job``: its id and queue); ``copy_key``: its DLQ
    copy, with this key, is sent next (``COPY_DUE``)."""
    job_id, queue = job
    sets, values = status_change(table, job_id, DEAD, now, queue=queue)
    sets |= {"run_at": ":now", "expires_at": ":expires_at"}
    remove = error_write(sets, values, LEASE_FIELDS, error)
    if copy_key is not None:
        _copy_due(sets, values, now, copy_key)
    values |= statuses(RUNNING) | {":token": text(token), ":expires_at": number(expires_at)}
    note(sets, values, noted)
    ride_progress(sets, values, progress)
    return update(
        table.name,
        job_id,
        sets=sets,
        condition=HOLDS_LEASE,
        values=values,
        remove=remove,
        returns=True,
    )


def release(
    table: IndexedTable,
    job_id: str,
    token: str,
    error: str,
    now: float,
    due: Due,
    noted: Noted | None = None,
    *,
    progress: str | None = None,
) -> Call:
    """Queued again, or delayed (a deferred start): ``due`` is ``after_release``'s status
    and ``run_at``; the interrupted or deferred attempt is not counted."""
    status, run_at = due
    sets, values = status_change(table, job_id, status, now)
    sets |= {"attempts": "#attempts - :one", "run_at": ":run_at"}
    remove = error_write(sets, values, LEASE_FIELDS, error)
    values |= statuses(RUNNING) | {
        ":token": text(token),
        ":one": number(1),
        ":run_at": number(run_at),
    }
    note(sets, values, noted)
    ride_progress(sets, values, progress)
    return update(
        table.name, job_id, sets=sets, condition=HOLDS_LEASE, values=values, remove=remove
    )


def cancel(
    table: IndexedTable,
    job_id: str,
    now: float,
    expires_at: float,
    *,
    queue: str | None = None,
    noted: Noted | None = None,
) -> Call:
    """Cancel a waiting job; its ``queue``, when known, lets the entry move (format 3)."""
    sets, values = status_change(table, job_id, JobStatus.CANCELLED, now, queue=queue)
    sets["expires_at"] = ":expires_at"
    cancellable = sorted(CANCELLABLE)
    values |= statuses(*cancellable) | {":expires_at": number(expires_at)}
    condition = f"#status IN ({', '.join(f':{s.value}' for s in cancellable)})"
    note(sets, values, noted)
    return update(
        table.name,
        job_id,
        sets=sets,
        condition=condition,
        values=values,
        remove=LEASE_FIELDS,
        returns=True,
    )


def abandoned_dead(
    table: IndexedTable,
    job: tuple[str, str],
    error: str,
    now: float,
    skew: float,
    expires_at: float,
    noted: Noted | None = None,
) -> Call:
    """Dead-letter a job whose runs kept dying: its message reached the DLQ by redrive.

    Only a running record with its lease over qualifies. A waiting one is left alone: its
    redriven message may be a stray duplicate, and if it was the only one, the
    reconciler's stale pass sends a fresh one.
    """
    job_id, queue = job
    sets, values = status_change(table, job_id, DEAD, now, queue=queue)
    sets["expires_at"] = ":expires_at"
    remove = error_write(sets, values, LEASE_FIELDS, error)
    values |= statuses(RUNNING) | {
        ":expires_at": number(expires_at),
        ":lease_ended_before": number(now - skew),
    }
    note(sets, values, noted)
    return update(
        table.name,
        job_id,
        sets=sets,
        condition=ABANDONED,
        values=values,
        remove=remove,
        returns=True,
    )


def copied(table: IndexedTable, job: tuple[str, str], due: float) -> Call:
    """The DLQ copy of a dead record (``job``: its id and queue; dead since ``due``) was
    sent: it ends in the index.

    Conditional on the same death, so a copy confirmed late never touches a job that
    has since run again (or died again, with a copy of its own still to come).
    """
    job_id, queue = job
    values = statuses(DEAD) | {":due": number(due), ":phase": text(phase(DEAD))}
    sets = {"phase": ":phase"}
    if table.moves:
        sets["list_pk"] = ":list_pk"
        values[":list_pk"] = text(home(queue, job_id, table.shards, DEAD))
    return update(
        table.name,
        job_id,
        sets=sets,
        condition=f"#status = :dead AND #{COPY_DUE} = :due",
        values=values,
        remove=(COPY_DUE,),
    )


def revive(
    table: IndexedTable,
    job: tuple[str, str],
    queues: Sequence[str],
    now: float,
    noted: Noted | None = None,
    key: str | None = None,
) -> Call:
    """Run a dead job (its id and queue) again: queued now, attempts reset, retention and
    lease cleared.

    ``last_error`` stays, so the record still says why it died. The condition names the
    queues the caller can send to, so a job it could not deliver is never revived;
    ``key``, when given, must be the key of the death its record holds (a copy SQS moved
    back from the DLQ carries it: ``copy_marks``), and the revive clears it.
    """
    job_id, queue = job
    sets, values = status_change(table, job_id, QUEUED, now, queue=queue)
    sets |= {"attempts": ":zero", "run_at": ":now"}
    names = [f":queue{i}" for i in range(len(queues))]
    values |= statuses(DEAD) | {":zero": number(0)}
    values |= {name: text(queue) for name, queue in zip(names, queues, strict=True)}
    condition = f"{REVIVABLE} AND #queue IN ({', '.join(names)})"
    if key is not None:
        condition += f" AND #{REVIVE_KEY} = :revive_key"
        values[":revive_key"] = text(key)
    note(sets, values, noted)
    return update(
        table.name,
        job_id,
        sets=sets,
        condition=condition,
        values=values,
        remove=(*LEASE_FIELDS, "expires_at", "resent_at", COPY_DUE, REVIVE_KEY),
        returns=True,
    )
