"""A job's history on its record: ten slots written in turn, and a count of every entry.

DynamoDB cannot append to a list and trim it in one update expression (the two paths
overlap), and a history that only grows would make every later write of the record
bill more. So the record keeps its entries in ``HISTORY_KEPT`` slots, ``h0`` … ``h9``:
entry number ``n`` (from 0) goes to slot ``h{n % 10}``, over the entry ten before it,
and ``hist_n`` counts every entry ever written (``Job.history_count``). Each slot is one
string, the entry as compact JSON with short keys (about 100 bytes for an attempt that
completed, up to about 450 with an error). Only the entries numbered from ``hist_n - 10``
on are read: a slot may still hold an older one.

A job that completes with nothing before it in its history keeps no slot for it: the
completing write only counts it, and a reader makes the entry from what the record says
anyway (``completion_entry``: when it completed, on which attempt). A small job's
completed record is within a few dozen bytes of 1 KB, the size every write bills per
unit, and that one counter keeps it where it was: 6 WRU for the whole job.

Every write that adds an entry is a write the store makes anyway (an outcome, an
operator's action, a lease found over), conditional on a record it has read or claimed:
it knows ``n`` from that view (``Job.history_count``). The count is incremented in the
expression rather than set, so it stays exact even if a view was stale; two actions on
one record racing between their read and their write could then write one slot twice
(one entry lost, the count still right), which their status conditions make all but
impossible. Releases before this one ignore the attributes; their writes add no
entries, and records they wrote read as an empty history.
"""

from __future__ import annotations

import json
from typing import Any

from ...core.history import ATTEMPT, HISTORY_KEPT, HistoryEntry, completion_entry
from ...core.times import epoch, utc, utc_or_none

COUNT = "hist_n"
SLOTS = tuple(f"h{n}" for n in range(HISTORY_KEPT))
# An entry and its number (the record's count before it); no entry: only counted (the
# completion of a job with nothing before it, which readers make from the record).
Noted = tuple[HistoryEntry | None, int]


def slot(n: int) -> str:
    """The attribute that entry number ``n`` is written to."""
    return SLOTS[n % HISTORY_KEPT]


def entry_text(entry: HistoryEntry, n: int) -> str:
    """``entry`` (number ``n``) as its slot keeps it: compact JSON, absent fields left out."""
    fields: dict[str, Any] = {"n": n, "at": epoch(entry.at), "o": entry.outcome}
    optional = {
        "k": None if entry.kind == ATTEMPT else entry.kind,  # most are attempts
        "a": entry.attempt,
        "s": None if entry.started_at is None else epoch(entry.started_at),
        "w": entry.worker,
        "e": entry.error,
        "by": entry.by,
    }
    fields |= {key: value for key, value in optional.items() if value is not None}
    if entry.traceback:
        fields["tb"] = 1
    return json.dumps(fields, separators=(",", ":"), ensure_ascii=False)


def note(sets: dict[str, str], values: dict[str, Any], noted: Noted | None) -> None:
    """Add ``noted`` to an update's SET clauses: its slot, and the count plus one."""
    if noted is None:
        return
    entry, n = noted
    sets[COUNT] = f"if_not_exists(#{COUNT}, :hist_zero) + :hist_one"
    values |= {":hist_zero": {"N": "0"}, ":hist_one": {"N": "1"}}
    if entry is not None:
        sets[slot(n)] = ":hist_entry"
        values[":hist_entry"] = {"S": entry_text(entry, n)}


def history_of(item: dict[str, Any]) -> tuple[list[HistoryEntry], int]:
    """The entries ``item`` keeps, oldest first, and how many were written in all.

    A slot that does not decode (written by hand, or by a later release in a form this
    one does not know) is left out: the history explains a record, it must never make
    one unreadable.
    """
    numbered: dict[int, HistoryEntry] = {}
    for name in SLOTS:
        decoded = _decoded(item[name]) if name in item else None
        if decoded is not None:
            numbered[decoded[0]] = decoded[1]
    count = int(item[COUNT]["N"]) if COUNT in item else 0
    count = max([count, *(n + 1 for n in numbered)])
    last = count - 1
    if last >= 0 and last not in numbered and "completed_at" in item:
        completed = float(item["completed_at"]["N"])
        numbered[last] = completion_entry(completed, int(item["attempts"]["N"]))
    kept = sorted(n for n in numbered if n >= count - HISTORY_KEPT)
    return [numbered[n] for n in kept], count


def _decoded(value: Any) -> tuple[int, HistoryEntry] | None:
    try:
        fields = json.loads(value["S"])
        entry = HistoryEntry.model_construct(
            at=utc(float(fields["at"])),
            kind=str(fields.get("k", ATTEMPT)),
            attempt=None if fields.get("a") is None else int(fields["a"]),
            started_at=utc_or_none(None if fields.get("s") is None else float(fields["s"])),
            worker=fields.get("w"),
            outcome=str(fields["o"]),
            error=fields.get("e"),
            traceback=bool(fields.get("tb")),
            by=fields.get("by"),
        )
        return int(fields["n"]), entry
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
