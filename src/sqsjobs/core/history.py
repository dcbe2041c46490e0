"""A job's history: its attempts and the operator actions on it, oldest first, bounded.

``last_error`` keeps only the latest failure, and a dead job run again by an operator
is back to ``queued 0/4`` with nothing saying it died and who sent it back. The first
error is often the one that explains the rest, so every record also keeps the last
``HISTORY_KEPT`` entries of its story (``Job.history``) and how many there were in all
(``Job.history_count``), so a bounded list says how many it left out.

An entry is written by the write that makes it true, never by a request of its own:

    kind      written by                          outcome
    attempt   complete, fail, release on stop     completed, retry, dead, released
    expired   the claim that finds a lease over   retry (it runs again) or dead
    retry     an operator's retry of a dead job   queued
    redrive   a redrive of a dead job             queued
    cancel    cancel                              cancelled

A release that defers a start (a limit, a tenant's cap) or hands back a job no run
started is no attempt (``lifecycle.release_ends_attempt``) and writes none. The error of
an entry is its failure's ``last_error`` line made safe as ``last_error`` is
(``text.safe_line``) and cut shorter (``MAX_ENTRY_ERROR_CHARS``): ten of them ride on
every later write of the record, which a store may bill by its size.

A job that completes with nothing before it in its history (the first attempt, the
common case) gets a bare entry (``completion_entry``): when, which attempt, completed,
what the record says anyway, without the worker or the start, so that its record stays
as small as it was (``SqsJobStore`` bills every write by the KB, and a small job's
record sits just under one). A job with a story to tell gets a full entry for its
completion.

Kinds and outcomes are plain strings, so a record written by a later release with a new
kind still reads here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from .text import safe_line
from .times import utc, utc_or_none
from .tracebacks import traceback_of

HISTORY_KEPT = 10
MAX_ENTRY_ERROR_CHARS = 300

# Kinds: an attempt, a lease that ran out, or an operator's action.
ATTEMPT, EXPIRED = "attempt", "expired"
RETRY, REDRIVE, CANCEL = "retry", "redrive", "cancel"
ACTIONS = frozenset({RETRY, REDRIVE, CANCEL})
# Outcomes: what became of the job.
COMPLETED, RETRIED, DEAD, RELEASED = "completed", "retry", "dead", "released"
QUEUED, CANCELLED = "queued", "cancelled"

T = TypeVar("T")


class HistoryEntry(BaseModel):
    """One attempt or action in a job's history (every datetime is aware UTC)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    at: datetime  # when the attempt ended or the action happened
    kind: str  # attempt, expired, retry, redrive or cancel
    attempt: int | None  # the attempt it ended (or, for a cancel, cut short)
    started_at: datetime | None  # when that attempt was claimed, where known
    worker: str | None  # the worker that ran it
    outcome: str  # completed, retry, dead, released, queued or cancelled
    error: str | None = None  # "ExcName: message", redacted, at most MAX_ENTRY_ERROR_CHARS
    traceback: bool = False  # the failure had a traceback (the record keeps the latest only)
    by: str | None = None  # who acted, where known: "cli:ana@host", "dashboard"


def entry_error(error: str | None) -> str | None:
    """``error`` as an entry keeps it: one line, no credentials, capped."""
    if error is None:
        return None
    text = safe_line(str(error))
    if len(text) > MAX_ENTRY_ERROR_CHARS:
        return text[: MAX_ENTRY_ERROR_CHARS - 1] + "…"
    return text


def attempt_entry(
    now: float,
    attempt: int,
    run: tuple[float | None, str | None],
    outcome: str,
    error: str | None = None,
    *,
    kind: str = ATTEMPT,
) -> HistoryEntry:
    """The entry of attempt number ``attempt`` that ended at ``now`` with ``outcome``.

    ``run`` is what its claim wrote: when (``None`` where the writer does not know it)
    and the worker. ``error`` may be a ``FailureText``: whether it carried a traceback is
    noted.
    """
    started, worker = run
    return HistoryEntry.model_construct(
        at=utc(now),
        kind=kind,
        attempt=attempt,
        started_at=utc_or_none(started),
        worker=worker,
        outcome=outcome,
        error=entry_error(error),
        traceback=error is not None and traceback_of(error) is not None,
        by=None,
    )


def completion_entry(now: float, attempt: int) -> HistoryEntry:
    """The entry of a job that completed at ``now`` on ``attempt`` with nothing before it.

    Every store notes it alike, from what the record keeps anyway: a store that keeps
    records by the KB writes no more than the count for it.
    """
    return attempt_entry(now, attempt, (None, None), COMPLETED)


def action_entry(
    now: float,
    kind: str,
    outcome: str,
    by: str | None = None,
    cut: tuple[int, str | None] | None = None,
) -> HistoryEntry:
    """An operator's action at ``now``; ``cut``: the attempt it cut short and its worker
    (a running job cancelled)."""
    attempt, worker = cut if cut is not None else (None, None)
    return HistoryEntry.model_construct(
        at=utc(now),
        kind=kind,
        attempt=attempt,
        started_at=None,
        worker=worker,
        outcome=outcome,
        error=None,
        traceback=False,
        by=None if by is None else safe_line(by),
    )


def summary(entry: HistoryEntry) -> str:
    """What an entry says, in one line an operator reads (its error apart): what happened,
    on which attempt, where and by whom. ``jobs show`` and the dashboard both show it."""
    n, on = entry.attempt, f" on {entry.worker}" if entry.worker else ""
    by = f" by {entry.by}" if entry.by else ""
    ran = _ran(entry)
    if entry.kind == ATTEMPT:
        said = {
            COMPLETED: f"attempt {n} completed{on}{ran}",
            RETRIED: f"attempt {n} failed{on}{ran}, to be retried",
            DEAD: f"dead after attempt {n}{on}{ran}",
            RELEASED: f"attempt {n} released{on}{ran}, not counted",
        }
        return said.get(entry.outcome, f"attempt {n} {entry.outcome}{on}{ran}")
    if entry.kind == EXPIRED:
        if entry.outcome == DEAD:
            return f"dead after attempt {n}: its lease ran out{on}"
        return f"attempt {n}: its lease ran out{on}, run again"
    if entry.kind in (RETRY, REDRIVE):
        return f"{'retried' if entry.kind == RETRY else 'redriven'}{by}: {entry.outcome}"
    if entry.kind == CANCEL:
        during = f" during attempt {n}{on}" if n is not None else ""
        return f"cancelled{by}{during}"
    return f"{entry.kind}{by}: {entry.outcome}"  # a kind a later release wrote


def _ran(entry: HistoryEntry) -> str:
    if entry.started_at is None:
        return ""
    seconds = max((entry.at - entry.started_at).total_seconds(), 0.0)
    if seconds < 60:
        return f" (ran {seconds:.1f} s)"
    minutes, seconds = divmod(round(seconds), 60)
    return f" (ran {minutes} min {seconds} s)"


def appended(history: list[HistoryEntry], entry: HistoryEntry) -> list[HistoryEntry]:
    """``history`` with ``entry`` last, the oldest left out beyond ``HISTORY_KEPT``."""
    return [*history, entry][-HISTORY_KEPT:]


def accepts_by(method: Callable[..., Any]) -> bool:
    """Whether a store's operator call takes ``by=`` (a custom store's may not)."""
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.kind is p.VAR_KEYWORD
        or (p.name == "by" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
        for p in parameters
    )


def acting(method: Callable[..., T], *args: Any, by: str | None, **kwargs: Any) -> T:
    """Call a store's ``retry``, ``redrive`` or ``cancel`` with ``by`` when it takes it.

    The store SPI's operator calls had no ``by``; a custom store written for it still
    works, and its history (if it keeps one) just does not say who acted.
    """
    if by is not None and accepts_by(method):
        kwargs["by"] = by
    return method(*args, **kwargs)
