"""How queue stats look on a terminal and in ``--json``: one table of jobs and messages
at 110 columns or more, two narrower ones below that (``_render`` has the rules every
table follows); then who serves each queue (the workers alive, the last claim, how long
the job due first has waited), and a line for each thing that wants attention
(``core.attention``): work waiting with no worker, a long wait, dead letters, job names
no worker serves."""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from .. import JobStatus
from ..core.attention import duration, health_of, reasons
from ..core.presence import PRESENCE_TTL
from ..core.times import epoch
from ._render import STATUS_STYLE, instant_adapter, literal, table

if TYPE_CHECKING:
    from ..core.reports import QueueStats


def stats_table(found: Iterable[QueueStats], now: float | None = None) -> StatsTables:
    """Per queue: records by status, then what SQS holds; numbers right-aligned.

    One table from ``WIDE_STATS`` columns; below that, two (records, then messages) so
    every header stays whole at 80 columns instead of shrinking to ``del…``, which could
    be either delayed count. Then the workers per queue and what needs attention, as of
    ``now`` (the time of the call by default).
    """
    return StatsTables(list(found), time.time() if now is None else now)


WIDE_STATS = 110  # the one-table layout's width with a queue name of about ten characters
SQS_COLUMNS = ("SQS\nvisible", "SQS\nin flight", "SQS\ndelayed", "DLQ")
SERVE_COLUMNS = ("workers\nalive", "last\nclaim", "oldest\nqueued")


def ago(at: datetime, now: float) -> str:
    """How long before ``now`` an instant was: ``12s ago``."""
    return f"{duration(now - epoch(at))} ago"


class StatsTables:
    """The stats of some queues, laid out for the width they are printed at."""

    def __init__(self, found: list[QueueStats], now: float) -> None:
        self.found = found
        self.now = now

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.max_width >= WIDE_STATS:
            yield self._table("Jobs and messages per queue", records=True, messages=True)
        else:
            yield self._table("Jobs per queue", records=True, messages=False)
            yield self._table("Messages per queue", records=False, messages=True)
        yield self._workers()
        if any(queue.workers == 0 for queue in self.found):
            yield literal(
                f"0 workers alive: none wrote its presence record in the last {PRESENCE_TTL:g} s "
                "(sqsjobs workers lists those that did)",
                "dim",
            )
        for reason in self.reasons():
            yield literal(f"! {reason}", "bold red")

    def reasons(self) -> list[str]:
        """What needs attention, queue by queue (``core.attention``)."""
        return [text for queue in self.found for text in reasons(health_of(queue, self.now))]

    def _workers(self) -> Table:
        made = table("Workers per queue", "queue", *SERVE_COLUMNS, ids=("queue",))
        for column in made.columns[1:]:
            column.justify = "right"
        for queue in self.found:
            workers = "-" if queue.workers is None else str(queue.workers)
            waited = queue.oldest_queued_at
            made.add_row(
                queue.queue,
                workers,
                ago(queue.last_claim_at, self.now) if queue.last_claim_at else "never",
                "-" if waited is None else duration(self.now - epoch(waited)),
            )
        return made

    def _statuses(self) -> list[JobStatus]:
        """The status columns: ``waiting`` only while some queue has jobs waiting for
        their parents, so a fleet that composes no jobs keeps its narrower table."""
        waits = any(queue.counts.get(JobStatus.WAITING, 0) for queue in self.found)
        return [status for status in JobStatus if waits or status is not JobStatus.WAITING]

    def _table(self, title: str, *, records: bool, messages: bool) -> Table:
        made = table(title, "queue", ids=("queue",))
        statuses = self._statuses() if records else []
        for status in statuses:
            made.add_column(Text(status.value, style=STATUS_STYLE[status]), justify="right")
        if messages:
            for column in SQS_COLUMNS:
                made.add_column(column, justify="right")
        for queue in self.found:
            cells = [str(queue.counts.get(status, 0)) for status in statuses]
            if messages:
                dead_letters = queue.dead_letter_messages
                cells += [
                    str(queue.messages),
                    str(queue.in_flight),
                    str(queue.delayed),
                    "-" if dead_letters is None else str(dead_letters),
                ]
            made.add_row(queue.queue, *cells)
        since = [queue.ended_since for queue in self.found if queue.ended_since is not None]
        if records and since:
            made.caption = f"ended: jobs created since {min(since):%Y-%m-%d %H:%M:%S} UTC"
        return made


def stats_record(queue: QueueStats, now: float | None = None) -> dict[str, Any]:
    """Every field of one queue's stats, and what needs attention in it as of ``now``."""
    at = time.time() if now is None else now
    instants = instant_adapter()

    def instant(value: datetime | None) -> Any:
        return None if value is None else instants.dump_python(value, mode="json")

    return {
        "queue": queue.queue,
        "counts": {status.value: queue.counts.get(status, 0) for status in JobStatus},
        "messages": queue.messages,
        "in_flight": queue.in_flight,
        "delayed": queue.delayed,
        "dead_letter_messages": queue.dead_letter_messages,
        # The terminal counts are of the jobs created since then; null: of every job kept.
        "ended_since": instant(queue.ended_since),
        # From the workers' presence records; null workers: the store keeps none.
        "workers": queue.workers,
        "last_claim_at": instant(queue.last_claim_at),
        "served_names": sorted(queue.served_names),
        "waiting_names": dict(sorted(queue.waiting_names.items())),
        "unserved_names": dict(sorted(queue.unserved_names.items())),
        "oldest_queued_at": instant(queue.oldest_queued_at),
        "attention": reasons(health_of(queue, at)),
    }
