"""How queue stats look on a terminal and in ``--json``: one table of jobs and messages
at 110 columns or more, two narrower ones below that (``_render`` has the rules every
table follows)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from .. import JobStatus
from ._render import STATUS_STYLE, instant_adapter, table

if TYPE_CHECKING:
    from ..core.reports import QueueStats


def stats_table(found: Iterable[QueueStats]) -> StatsTables:
    """Per queue: records by status, then what SQS holds; numbers right-aligned.

    One table from ``WIDE_STATS`` columns; below that, two (records, then messages) so
    every header stays whole at 80 columns instead of shrinking to ``del…``, which could
    be either delayed count.
    """
    return StatsTables(list(found))


WIDE_STATS = 110  # the one-table layout's width with a queue name of about ten characters
SQS_COLUMNS = ("SQS\nvisible", "SQS\nin flight", "SQS\ndelayed", "DLQ")


class StatsTables:
    """The stats of some queues, laid out for the width they are printed at."""

    def __init__(self, found: list[QueueStats]) -> None:
        self.found = found

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.max_width >= WIDE_STATS:
            yield self._table("Jobs and messages per queue", records=True, messages=True)
        else:
            yield self._table("Jobs per queue", records=True, messages=False)
            yield self._table("Messages per queue", records=False, messages=True)

    def _table(self, title: str, *, records: bool, messages: bool) -> Table:
        made = table(title, "queue", ids=("queue",))
        if records:
            for status in JobStatus:
                made.add_column(Text(status.value, style=STATUS_STYLE[status]), justify="right")
        if messages:
            for column in SQS_COLUMNS:
                made.add_column(column, justify="right")
        for queue in self.found:
            cells = [str(queue.counts.get(status, 0)) for status in JobStatus] if records else []
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


def stats_record(queue: QueueStats) -> dict[str, Any]:
    return {
        "queue": queue.queue,
        "counts": {status.value: queue.counts.get(status, 0) for status in JobStatus},
        "messages": queue.messages,
        "in_flight": queue.in_flight,
        "delayed": queue.delayed,
        "dead_letter_messages": queue.dead_letter_messages,
        # The terminal counts are of the jobs created since then; null: of every job kept.
        "ended_since": None
        if queue.ended_since is None
        else instant_adapter().dump_python(queue.ended_since, mode="json"),
    }
