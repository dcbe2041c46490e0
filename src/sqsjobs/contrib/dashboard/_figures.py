"""The dashboard's numbers, computed from job records: pure functions of the jobs and ``now``.

The stores count jobs by status (``SqsJobStore.stats``) but neither keeps a history of
finished work, so throughput is read off the finished records themselves: a job counts
in the bucket of the instant it finished (``completed_at``, else ``updated_at`` for a
dead or cancelled one). Records past their retention are gone, so the window must stay
well inside the shortest retention (an hour against a default of a day).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...core import history
from ...core.attention import duration
from ...core.history import HistoryEntry
from ...core.lifecycle import COMPLETED, DEAD, DELAYED, QUEUED, TERMINAL
from ...core.models import Job, JobStatus
from ...core.times import epoch

WINDOW = 3600.0  # seconds of throughput shown
BUCKETS = 12  # five-minute bars


@dataclass(frozen=True)
class Throughput:
    """Jobs that finished in the last ``WINDOW`` seconds, oldest bucket first."""

    completed: int = 0
    dead: int = 0
    buckets: tuple[int, ...] = (0,) * BUCKETS  # completed and dead together, per bucket

    @property
    def per_minute(self) -> float:
        return (self.completed + self.dead) / (WINDOW / 60)

    def heights(self) -> list[int]:
        """Each bucket as a percentage of the busiest one, for the bars."""
        top = max(self.buckets)
        return [0 if top == 0 else round(100 * count / top) for count in self.buckets]


@dataclass
class _Tally:
    completed: int = 0
    dead: int = 0
    buckets: list[int] = field(default_factory=lambda: [0] * BUCKETS)


def finished_at(job: Job) -> float | None:
    """When a terminal job finished; ``None`` for one that has not."""
    if job.status not in TERMINAL:
        return None
    return epoch(job.completed_at or job.updated_at)


def throughput(jobs: Iterable[Job], now: float) -> dict[str, Throughput]:
    """Per queue: completed and dead jobs of the last hour, in five-minute buckets."""
    tallies: dict[str, _Tally] = {}
    width = WINDOW / BUCKETS
    for job in jobs:
        at = finished_at(job)
        if at is None or job.status not in (COMPLETED, DEAD) or not now - WINDOW < at <= now:
            continue
        tally = tallies.setdefault(job.queue, _Tally())
        if job.status is COMPLETED:
            tally.completed += 1
        else:
            tally.dead += 1
        tally.buckets[min(BUCKETS - 1, int((at - (now - WINDOW)) // width))] += 1
    return {
        queue: Throughput(tally.completed, tally.dead, tuple(tally.buckets))
        for queue, tally in tallies.items()
    }


def counts(jobs: Iterable[Job]) -> dict[str, dict[JobStatus, int]]:
    """Per queue: jobs in each status, every status present (zeros too)."""
    tallies: dict[str, Counter[JobStatus]] = {}
    for job in jobs:
        tallies.setdefault(job.queue, Counter())[job.status] += 1
    return {
        queue: {status: tally[status] for status in JobStatus} for queue, tally in tallies.items()
    }


def waiting_names(jobs: Iterable[Job]) -> dict[str, Counter[str]]:
    """Per queue: the jobs not started yet (queued or delayed), by job name."""
    tallies: dict[str, Counter[str]] = {}
    for job in jobs:
        if job.status in (QUEUED, DELAYED):
            tallies.setdefault(job.queue, Counter())[job.name] += 1
    return tallies


def age(seconds: float) -> str:
    """A duration the way a person reads it at a glance: ``42s``, ``7m 03s``, ``3h 05m``."""
    return duration(seconds)


def relative(at: datetime | None, now: float) -> str:
    """``at`` relative to ``now``: ``5m 02s ago`` or ``in 30s``; empty for none."""
    if at is None:
        return ""
    delta = epoch(at) - now
    return f"in {age(delta)}" if delta > 0.5 else f"{age(-delta)} ago"


def instant(at: datetime | None) -> str:
    """An instant in UTC to the millisecond, as the CLI prints them."""
    if at is None:
        return ""
    return at.strftime("%Y-%m-%d %H:%M:%S.") + f"{at.microsecond // 1000:03d} UTC"


def pretty_json(value: Any) -> str:
    """A payload or result indented for reading; non-ASCII text kept as written."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class Moment:
    """One line of a job's timeline."""

    label: str
    at: datetime


def timeline(job: Job) -> list[Moment]:
    """The instants a record keeps, in the order they happened."""
    moments = [
        Moment("created", job.created_at),
        Moment("due (run_at)", job.run_at),
        Moment("updated", job.updated_at),
    ]
    if job.lease_until is not None:
        moments.append(Moment("lease until", job.lease_until))
    if job.completed_at is not None:
        moments.append(Moment("completed", job.completed_at))
    return sorted(moments, key=lambda moment: moment.at)


def revival(job: Job) -> HistoryEntry | None:
    """The operator's latest retry or redrive of ``job`` while it runs again from it (not
    dead again): the record is back to 0 attempts with its old error, and this says why."""
    if job.status is DEAD:
        return None
    revived = [entry for entry in job.history if entry.kind in (history.RETRY, history.REDRIVE)]
    return revived[-1] if revived else None


def status_totals(per_queue: Mapping[str, Mapping[JobStatus, int]]) -> dict[JobStatus, int]:
    """Every queue's counts added up, per status."""
    return {status: sum(each.get(status, 0) for each in per_queue.values()) for status in JobStatus}
