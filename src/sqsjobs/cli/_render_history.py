"""A job's history on a terminal: one line per entry, oldest first (``jobs show``).

``last_error`` is the latest failure alone; the history is the story: each attempt, the
worker that ran it and how it ended (with its error's line), a lease that ran out, and
the operator's retries, redrives and cancels with who did them. A line is its time
(UTC, to the second, like every instant ``jobs show`` prints), what happened
(``core.history.summary``, the words the dashboard uses too) and the error. A record
keeps the last ten entries and counts them all: the heading says how many were left out.

Every stored value is printed as it is stored, its control characters escaped
(``core.text``), never read as markup: a worker id or an error is text others wrote.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from ..core import history
from ..core.history import HistoryEntry, summary
from ..core.models import Job
from ..core.text import escape_controls

OUTCOME_STYLE = {
    history.COMPLETED: "green",
    history.RETRIED: "yellow",
    history.DEAD: "bold red",
    history.RELEASED: "cyan",
    history.QUEUED: "cyan",
    history.CANCELLED: "magenta",
}
FAILED = frozenset({history.RETRIED, history.DEAD})


def history_parts(job: Job) -> list[RenderableType]:
    """The heading and the timeline of ``job``'s history; nothing when it has none."""
    if not job.history:
        return []
    heading = Text("history", style="bold")
    left_out = job.history_count - len(job.history)
    if left_out > 0:
        noun = "entry" if left_out == 1 else "entries"
        heading.append(f"  {left_out} earlier {noun} not kept", style="dim")
    timeline = Table.grid(padding=(0, 2))
    timeline.add_column(style="dim", no_wrap=True)
    timeline.add_column(overflow="fold")
    for entry in job.history:
        timeline.add_row(entry.at.strftime("%Y-%m-%d %H:%M:%S"), line(entry))
    return [heading, timeline]


def line(entry: HistoryEntry) -> Text:
    """What happened, coloured by how it ended, then the error (a failure's in red)."""
    shown = Text(escape_controls(summary(entry)), style=OUTCOME_STYLE.get(entry.outcome, ""))
    if entry.error:
        shown.append(": ")
        style = "red" if entry.kind == history.ATTEMPT and entry.outcome in FAILED else "dim"
        shown.append(escape_controls(entry.error), style=style)
    return shown
