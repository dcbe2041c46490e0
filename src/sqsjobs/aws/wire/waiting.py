"""The writes of jobs that wait for other jobs (``enqueue(after=...)``), as pure builders.

A waiting record keeps ``awaiting``, a string set of the parents it still waits for; a
parent keeps ``children``, the set of jobs that wait for it. Sets, because DynamoDB adds
to and deletes from them in place, so two parents ending at once each cross themselves
off without reading the record first; and an attribute a set empties is removed, which
is what the release's condition looks for. The flows are in ``flows.waiting``.
"""

from __future__ import annotations

from ...core.lifecycle import CANCELLED, COMPLETED, DEAD, WAITING
from ...core.models import JobStatus
from .dynamo import status_change, statuses, update
from .entries import Noted, note
from .index_keys import IndexedTable
from .items import AWAITING, CHILDREN, number, text
from .protocol import Call


def link(table: str, parent_id: str, child_id: str) -> Call:
    """Name ``child_id`` among a parent's children, unless the parent has ended (refused,
    with the parent as it is: ``ALL_OLD``)."""
    values = statuses(COMPLETED, DEAD, CANCELLED) | {":child": {"SS": [child_id]}}
    condition = "attribute_exists(#status) AND NOT #status IN (:completed, :dead, :cancelled)"
    adds = f"ADD #{CHILDREN} :child"
    return update(table, parent_id, sets={}, condition=condition, values=values, sets_of=adds)


def arrive(table: str, child_id: str, parent_id: str) -> Call:
    """Cross a completed parent off a waiting child's ``awaiting``: the child as it is then
    comes back (``ALL_NEW``); refused once the child has moved on, or it was crossed off."""
    values = statuses(WAITING) | {":parent": {"SS": [parent_id]}, ":parent_id": text(parent_id)}
    condition = f"#status = :waiting AND contains(#{AWAITING}, :parent_id)"
    deletes = f"DELETE #{AWAITING} :parent"
    return update(
        table, child_id, sets={}, condition=condition, values=values, returns=True, sets_of=deletes
    )


def release(table: IndexedTable, child_id: str, status: JobStatus, now: float) -> Call:
    """A child waiting for nothing any more goes to ``status`` (queued, or delayed until
    its ``run_at``); refused unless it still waits, for nobody, so it happens once."""
    sets, values = status_change(table, child_id, status, now)
    values |= statuses(WAITING)
    condition = f"#status = :waiting AND attribute_not_exists(#{AWAITING})"
    return update(table.name, child_id, sets=sets, condition=condition, values=values)


def cancel_child(
    table: IndexedTable,
    child: tuple[str, str],
    error: str,
    now: float,
    expires_at: float,
    noted: Noted,
) -> Call:
    """Cancel a waiting child (its id and queue) because a parent failed it: ``error`` says
    which; its own children come back with it (``ALL_NEW``) to be cancelled in turn."""
    child_id, queue = child
    sets, values = status_change(table, child_id, CANCELLED, now, queue=queue)
    sets |= {"expires_at": ":expires_at", "last_error": ":error"}
    values |= statuses(WAITING) | {":expires_at": number(expires_at), ":error": text(error)}
    note(sets, values, noted)
    return update(
        table.name,
        child_id,
        sets=sets,
        condition="#status = :waiting",
        values=values,
        remove=(AWAITING,),
        returns=True,
    )
