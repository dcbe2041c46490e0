"""How jobs look on a terminal, for every command: status colours, tables, one job in full.

Rendering only: functions take values and return rich renderables, so commands stay a
few lines of "read, render". Tables fit the width (80 columns included) without ever
cutting what an operator copies: ids, queue and handler names and URLs fold onto the
next line, whole (join a cell's lines to get it back); only free text such as a job's
last error is shortened with an ellipsis, and ``jobs show`` prints that whole. The job
list goes further (``_columns``): no column of it breaks a word, and a last error keeps
its class however short the message gets.

Output that is not a terminal (a pipe, a file, a CI log) is laid out for ``COLUMNS``
columns if it is set, else 80 (``output_console``): the same at every run, whatever
terminal started the command. Scripts should read ``--json``.

Stored text is printed as it is. A job's last error, key and payload come from whoever
enqueued or ran it, and rich reads a plain string as markup: ``[/x]`` would crash the
command, ``[link=...]x[/link]`` would show ``x`` over a hidden hyperlink, ``:smile:``
would turn into an emoji. So every value goes out as a ``Text`` (``literal``), through
``LiteralTable`` for table cells, with its control characters shown as escapes, so an
escape sequence in a record cannot act on the operator's terminal either, nor a bidi
control (``\\u202e``) show a value in another order than it is stored (``core.text``).

``--json`` output is built here too (``*_record``): every field of a record, a job as
pydantic dumps it (``Job.model_dump(mode="json")``, instants in ISO 8601 UTC), so a
script reads exactly what the Python API returns. It stays exact JSON: the characters
``json`` leaves raw that a terminal would act on (DEL, C1, line separators, bidi
controls) are written as ``\\uXXXX``, which a parser reads back as the same string.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from datetime import datetime
from typing import IO, TYPE_CHECKING, Any

from pydantic import TypeAdapter
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.style import StyleType
from rich.table import Table
from rich.text import Text

from .. import Job, JobStatus
from ..core.text import escape_controls, escape_json_controls
from ._columns import ID_CHARS, WIDE_TABLE, ErrorCell, Role, fit_table
from ._render_history import history_parts

if TYPE_CHECKING:
    from ..aws import DeadLetter

STATUS_STYLE = {
    JobStatus.WAITING: "bright_black",
    JobStatus.QUEUED: "cyan",
    JobStatus.DELAYED: "blue",
    JobStatus.RUNNING: "yellow",
    JobStatus.COMPLETED: "green",
    JobStatus.DEAD: "bold red",
    JobStatus.CANCELLED: "magenta",
}
SHORT_ID = 8
PIPE_WIDTH = 80  # columns for output that is not a terminal, unless COLUMNS says otherwise


def output_console() -> Console:
    """The console for a command's stdout: the terminal's width, or ``pipe_width()``."""
    width = None if sys.stdout.isatty() else pipe_width()
    return Console(highlight=False, width=width)


def pipe_width() -> int:
    """``COLUMNS`` if it is a positive number, else ``PIPE_WIDTH``."""
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH


def short_id(job_id: str) -> str:
    return job_id[:SHORT_ID]


def status_text(status: JobStatus) -> Text:
    return Text(status.value, style=STATUS_STYLE[status])


def counts_text(counts: Counter[JobStatus]) -> Text:
    """``queued 3  running 2  completed 4``, in lifecycle order, zeros left out."""
    text = Text()
    for status in JobStatus:
        if counts[status]:
            text.append(f"{status.value} {counts[status]}  ", style=STATUS_STYLE[status])
    return text


def literal(value: str, style: str = "") -> Text:
    """``value`` shown as it is: no markup, no emoji codes, control and bidi characters
    escaped."""
    return Text(escape_controls(value), style=style)


class LiteralTable(Table):
    """A table whose string cells are shown as they are (``literal``), never as markup."""

    def add_row(
        self,
        *renderables: RenderableType | None,
        style: StyleType | None = None,
        end_section: bool = False,
    ) -> None:
        cells = [literal(cell) if isinstance(cell, str) else cell for cell in renderables]
        super().add_row(*cells, style=style, end_section=end_section)


class FittedTable(LiteralTable):
    """A table whose id columns take a whole id per line when the width allows, else half.

    An id column has a fixed width, so rich narrows the other columns first; only at a
    width where even those cannot fit (80 columns) does an id fold, into two equal lines.
    """

    ids: Collection[str] = ()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = ID_CHARS if options.max_width >= WIDE_TABLE else ID_CHARS // 2
        for column in self.columns:
            if column.header in self.ids:
                cells = [column.header, *column.cells]
                longest = max(console.measure(cell).maximum for cell in cells)
                column.width = min(width, longest)
        yield from super().__rich_console__(console, options)


def table(
    title: str, *columns: str, flexible: str | None = None, ids: Collection[str] = ()
) -> Table:
    """A table that fits the console's width without losing what an operator copies.

    The ``flexible`` column is the first to narrow, its cells ending in an ellipsis (rich
    narrows the widest wrapping columns first, and free text is the widest). Every other
    column wraps when space is short, at a space if it can (a timestamp) and else
    anywhere (a name, a URL), never losing a character; the ``ids`` fold only when the
    width is short (``FittedTable``).
    """
    made = FittedTable(title=literal(title, "bold"), title_justify="left")
    made.ids = ids
    for column in columns:
        if column == flexible:
            made.add_column(column, overflow="ellipsis")
        else:
            made.add_column(column, overflow="fold")
    return made


def cell(text: str) -> Text:
    return Text(escape_controls(text), no_wrap=True, overflow="ellipsis")


def instant(value: datetime | None) -> str:
    """An instant to the second, in UTC like every stored one: ``2030-01-01 09:30:00``."""
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def attempts(job: Job) -> str:
    return f"{job.attempts}/{job.max_attempts}"


JOB_COLUMNS = {
    "id": Role.ID,
    "queue": Role.NAME,
    "name": Role.NAME,
    "status": Role.KEEP,
    "attempts": Role.KEEP,
    "run_at (UTC)": Role.WORDS,
    "last_error": Role.TEXT,
}
# What a narrow terminal goes without, first to last: of what ``jobs show`` tells too,
# what matters least when looking for a failure.
SPARED = ("run_at (UTC)", "attempts")


def job_table(title: str, jobs: Iterable[Job]) -> Table:
    """A row per job with its id on one line, so any row's can be pasted into ``jobs
    show``: whole from 120 columns, else a prefix that tells the page's ids apart; no
    column breaks a word at any width from 80 columns (``_columns``)."""
    made = fit_table(literal(title, "bold"), JOB_COLUMNS.items(), optional=SPARED)
    for job in jobs:
        made.add_row(
            job.id,
            job.queue,
            job.name,
            status_text(job.status),
            attempts(job),
            instant(job.run_at),
            error_cell(job),
        )
    return made


# ``dlq list``: every job is dead, so when it died (its record's last change, the death)
# stands where the status and run_at were; ids stay whole, to act on each one.
DEAD_JOB_COLUMNS = {
    **{column: JOB_COLUMNS[column] for column in ("id", "queue", "name", "attempts")},
    "died (UTC)": Role.WORDS,
    "last_error": Role.TEXT,
}


def dead_job_table(title: str, jobs: Iterable[Job]) -> Table:
    """``job_table`` for dead jobs: ids whole at any width, in two halves below 120."""
    spared = ("died (UTC)", "attempts")
    made = fit_table(
        literal(title, "bold"), DEAD_JOB_COLUMNS.items(), optional=spared, whole_ids=True
    )
    for job in jobs:
        made.add_row(
            job.id, job.queue, job.name, attempts(job), instant(job.updated_at), error_cell(job)
        )
    return made


def error_cell(job: Job) -> ErrorCell:
    """The job's last error, its class whole; a completed job's is history (an earlier
    attempt's), shown dim and said to be."""
    return ErrorCell(job.last_error or "", earlier=job.status is JobStatus.COMPLETED)


def job_detail(job: Job) -> Group:
    """Every field of one job; its history; the last failure's traceback; payload and
    result as JSON."""
    fields = LiteralTable.grid(padding=(0, 2))
    fields.add_column(style="dim", no_wrap=True)
    fields.add_column(overflow="fold")
    for name, value in job_fields(job).items():
        fields.add_row(name, value)
    parts: list[RenderableType] = [fields, *history_parts(job)]
    if job.last_traceback:  # stored escaped, one frame line per line (``core.tracebacks``)
        lines = "\n".join(escape_controls(line) for line in job.last_traceback.split("\n"))
        earlier = job.status is JobStatus.COMPLETED  # the last_error it goes with is, too
        title = "traceback (of that earlier attempt)" if earlier else "traceback"
        style = "dim" if earlier else "red"
        parts += [Text(title, style="bold"), Text(lines, style=style, overflow="fold")]
    parts += [Text("payload", style="bold"), json_block(job.payload)]
    if job.status is JobStatus.COMPLETED:
        parts += [Text("result", style="bold"), json_block(job.result)]
    return Group(*parts)


def job_fields(job: Job) -> dict[str, RenderableType]:
    """The record's scalar fields, in the order an operator reads them."""
    values: dict[str, RenderableType] = {
        "id": job.id,
        "queue": job.queue,
        "name": job.name,
        "status": status_text(job.status),
        "attempts": attempts(job),
    }
    for name in ("run_at", "created_at", "updated_at", "completed_at", "lease_until"):
        value = getattr(job, name)
        values[name] = f"{instant(value)} UTC" if value is not None else "-"
    values["locked_by"] = job.locked_by or "-"
    values["priority"] = str(job.priority)
    values["timeout"] = f"{job.timeout:g}s"
    values["lease"] = f"{job.lease:g}s"
    values["idempotency_key"] = job.idempotency_key or "-"
    values["tenant"] = job.tenant or "-"
    values["group"] = job.group or "-"
    if job.after:  # the jobs it waits for, or waited for (``enqueue(after=...)``)
        values["after"] = ", ".join(job.after)
    if job.children:  # the jobs that wait, or waited, for it
        values["children"] = ", ".join(job.children)
    if job.batch_id:  # its batch, and for a callback which one it is
        role = f" ({job.batch_callback} callback)" if job.batch_callback else ""
        values["batch"] = f"{job.batch_id}{role}"
    if job.progress is not None:  # as its run last reported it (``ctx.progress``)
        values["progress"] = json_text(job.progress)
    values["last_error"] = job.last_error or "-"
    if job.status is JobStatus.COMPLETED and job.last_error:
        values["last_error"] = literal(
            f"{job.last_error} (an earlier attempt's: it completed)", "dim"
        )
    return values


def json_block(value: object) -> Text:
    """``value`` as indented JSON that is still JSON, whatever its strings hold."""
    return Text(json_text(value, indent=2), no_wrap=True)


def json_text(value: object, indent: int | None = None) -> str:
    """JSON with every control character escaped (``json`` itself leaves DEL, C1 and the
    bidi controls as they are)."""
    return escape_json_controls(json.dumps(value, ensure_ascii=False, indent=indent))


def mapping_table(title: str, key: str, value: str, rows: Mapping[str, str]) -> Table:
    """Two aligned columns, e.g. a stack's outputs."""
    made = table(title, key, value)
    for name, text in rows.items():
        made.add_row(name, Text(escape_controls(text), overflow="fold"))
    return made


DEAD_LETTER_COLUMNS = (
    "queue",
    "job id",
    "name",
    "status",
    "attempts",
    "receives",
    "sent (UTC)",
    "last_error",
)


def dead_letter_table(title: str, letters: Iterable[DeadLetter]) -> Table:
    """One line per DLQ message: the job it names (full id, for ``jobs show``) as it stands.

    A message that is no job's delivery token shows a short message id in place of the
    job id, and the last column says why a row has no job.
    """
    made = table(title, *DEAD_LETTER_COLUMNS, flexible="last_error", ids=("job id",))
    for letter in letters:
        made.add_row(
            letter.queue,
            *_job_cells(letter),
            str(letter.receive_count),
            instant(letter.sent_at),
            _note(letter),
        )
    return made


def _job_cells(letter: DeadLetter) -> tuple[RenderableType, ...]:
    """Job id, name, status and attempts, or what stands in for a job that is not there."""
    job = letter.job
    if job is not None:
        return job.id, job.name, status_text(job.status), attempts(job)
    if letter.job_id is None:
        return f"message {letter.message_id[:SHORT_ID]}", "-", "", ""
    return letter.job_id, "-", "", ""


def _note(letter: DeadLetter) -> Text:
    if letter.job is not None:
        return cell(letter.job.last_error or "")
    why = "not a job message" if letter.job_id is None else "no record (expired or never written)"
    return Text(why, style="dim", no_wrap=True, overflow="ellipsis")


@functools.cache  # pydantic takes tens of ms to build it: on first use, not at import
def instant_adapter() -> TypeAdapter[datetime]:
    return TypeAdapter(datetime)


# Taken as they are rather than through pydantic, whose JSON mode gives up at 255 levels
# of nesting: they are JSON values already (a producer stores only what validation made
# plain), and a payload may nest deeper than that, so --json would fail after enqueueing.
AS_STORED = frozenset({"payload", "result"})


def job_record(job: Job) -> dict[str, Any]:
    """``job.model_dump(mode="json")``, for a payload or result of any depth too."""
    dumped = job.model_dump(mode="json", exclude=set(AS_STORED))
    shown = [name for name, field in Job.model_fields.items() if not field.exclude]
    return {name: getattr(job, name) if name in AS_STORED else dumped[name] for name in shown}


def dead_letter_record(letter: DeadLetter) -> dict[str, Any]:
    return {
        "queue": letter.queue,
        "message_id": letter.message_id,
        "job_id": letter.job_id,
        "receive_count": letter.receive_count,
        "sent_at": instant_adapter().dump_python(letter.sent_at, mode="json"),
        "job": None if letter.job is None else job_record(letter.job),
    }


def write_json(value: object, out: IO[str]) -> None:
    out.write(json_text(value, indent=2) + "\n")


def write_json_list(records: Iterable[object], out: IO[str]) -> None:
    """One JSON list, written record by record: a long listing streams, yet parses whole."""
    out.write("[")
    for index, record in enumerate(records):
        out.write(",\n" if index else "\n")
        out.write(_indented(json_text(record, indent=2)))
        out.flush()
    out.write("\n]\n")


def _indented(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.split("\n"))
