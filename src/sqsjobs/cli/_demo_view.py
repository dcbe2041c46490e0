"""How the demo looks: the enqueue table, the live progress, the event log and the results.

Rendering only: every function takes values from the scenario and returns or prints
rich renderables, so the scenario stays free of terminal concerns. Rows never wrap
(long cells end in an ellipsis), so each job is one aligned line at any width.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import rich.progress
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from .. import Job, JobStatus
from ..core.text import escape_controls
from ..observe.log import EVENT_PREFIX, LOGGER_NAME, Event
from ._render import LiteralTable, cell, counts_text, json_text, short_id, status_text, table
from ._scenario import Enqueued, Progress

if TYPE_CHECKING:
    from ..aws import DeadLetter

EVENT_STYLE: dict[str, str] = {
    Event.COMPLETE: "green",
    Event.RETRY: "yellow",
    Event.DEAD: "bold red",
}
OUTCOME_EVENTS = frozenset(EVENT_STYLE)


def enqueue_table(enqueued: Sequence[Enqueued]) -> Table:
    made = table("Enqueued", "what", "name", "id", "status", "duplicate", flexible="what")
    for item in enqueued:
        job = item.result.job
        status = JobStatus.CANCELLED if item.cancelled else job.status
        duplicate = Text("yes", style="bold") if item.result.duplicate else ""
        made.add_row(
            cell(item.step.what), job.name, short_id(job.id), status_text(status), duplicate
        )
    return made


def status_table(jobs: Sequence[Job]) -> Table:
    made = table("Jobs", "id", "name", "status", "attempts", "last_error", flexible="last_error")
    for job in jobs:
        made.add_row(
            short_id(job.id),
            job.name,
            status_text(job.status),
            f"{job.attempts}/{job.max_attempts}",
            cell(job.last_error or ""),
        )
    return made


def dead_letters(dead: Sequence[Job]) -> Group:
    """Every dead job in full: what it carried and why it died, for inspection or redrive."""
    parts: list[RenderableType] = [Text(f"Dead letters ({len(dead)})", style="bold")]
    for job in dead:
        parts.append(Text.assemble((short_id(job.id), "bold red"), f" {job.name}"))
        fields = LiteralTable.grid(padding=(0, 2))
        fields.add_column(style="dim")
        fields.add_column(overflow="fold")
        fields.add_row("attempts", f"{job.attempts}/{job.max_attempts}")
        fields.add_row("payload", json_text(job.payload))
        fields.add_row("error", job.last_error or "")
        parts.append(Padding(fields, (0, 0, 0, 2)))
    return Group(*parts)


def dead_letter_queues(depths: Mapping[str, int], letters: Sequence[DeadLetter]) -> Text:
    """What SQS itself holds: each dead-letter queue's depth and the jobs its messages name."""
    lines = []
    for queue, depth in depths.items():
        named = [
            f"{letter.job.name} {short_id(letter.job.id)}" if letter.job else "not a job message"
            for letter in letters
            if letter.queue == queue
        ]
        listed = f": {', '.join(named)}" if named else ""
        lines.append(
            f"SQS dead-letter queue of {queue!r}: {depth} message(s) waiting for redrive{listed}"
        )
    return Text("\n".join(lines))


def summary(enqueued: Sequence[Enqueued], jobs: Sequence[Job], elapsed: float) -> Text:
    counts = Counter(job.status for job in jobs)
    duplicates = sum(item.result.duplicate for item in enqueued)
    text = Text(
        f"{len(jobs)} jobs ({len(enqueued)} enqueues, {duplicates} duplicate) in {elapsed:.1f}s: "
    )
    return text.append_text(counts_text(counts))


@contextmanager
def live_progress(console: Console, total: int) -> Iterator[Callable[[Progress], None]]:
    """A live bar of jobs done out of ``total``, with the count in each status."""
    bar = rich.progress.Progress(
        rich.progress.SpinnerColumn(),
        rich.progress.TextColumn("[bold]jobs"),
        rich.progress.BarColumn(),
        rich.progress.MofNCompleteColumn(),
        rich.progress.TimeElapsedColumn(),
        rich.progress.TextColumn("{task.fields[statuses]}"),
        console=console,
    )
    task = bar.add_task("jobs", total=total, statuses="")

    def update(progress: Progress) -> None:
        bar.update(task, completed=progress.done, statuses=counts_text(progress.counts))

    with bar:
        yield update


class EventLog(logging.Handler):
    """Prints sqsjobs' structured log records as one short line per job event."""

    def __init__(self, console: Console, events: frozenset[str] | None) -> None:
        super().__init__()
        self.console = console
        self.events = events

    def emit(self, record: logging.LogRecord) -> None:
        event = str(getattr(record, "event", ""))
        if self.events is not None and event not in self.events:
            return
        label = event.removeprefix(EVENT_PREFIX) or record.levelname.lower()
        line = Text(f"{label:<9} ", style=EVENT_STYLE.get(event, "dim"))
        job_id = getattr(record, "job_id", None)
        if job_id is not None:
            name = getattr(record, "job_name", None)
            line.append(f"{name} {short_id(job_id)} " if name else f"{short_id(job_id)} ")
        detail = _detail(record) if job_id and event else record.getMessage()
        line.append(escape_controls(detail), style="dim")
        self.console.print(line, no_wrap=True, overflow="ellipsis")


def _detail(record: logging.LogRecord) -> str:
    error = getattr(record, "error", None)
    delay = getattr(record, "delay", None)
    attempt = getattr(record, "attempt", None)
    if error is None:
        return record.getMessage() if attempt is None else f"attempt {attempt}"
    if delay is not None and getattr(record, "event", None) == Event.RETRY:
        return f"again in {delay:.2f}s: {error}"
    return str(error)


@contextmanager
def event_log(console: Console, *, debug: bool) -> Iterator[None]:
    """Show job outcomes as they happen (every event with ``debug``), then restore logging."""
    logger = logging.getLogger(LOGGER_NAME)
    handler = EventLog(console, None if debug else OUTCOME_EVENTS)
    saved = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if debug else logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
