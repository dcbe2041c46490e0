"""``sqsjobs dlq``: what the dead-letter queues hold, and sending it back (list, redrive).

``list`` reads the dead jobs from their records and only counts each DLQ's messages
(``_dlq_records``): it receives none, since every receive raises a message's receive
count, which operators read as deliveries. ``list --peek`` receives the messages
themselves and hands them back, to show what no record tells (message ids, receive
counts, bodies that are not jobs); each peek raises each count by one, as it warns.

A peek and ``redrive`` go through the store, which reads each message's job record, the
source of truth: a message the redrive policy moved after its runs kept dying is
recorded ``dead`` on the way (SPEC §3). No form of ``list`` removes anything. ``redrive``
sends each job back to its queue (a dead one with its attempts reset) before it deletes
the DLQ message, discards the messages of jobs that finished or are gone, and leaves
anything that is not a job message where it is. A queue this store does not know is
bad usage (exit 2).

``--name`` narrows each to one handler's jobs: a redrive then sends back only those and
leaves every other message in the DLQ, visible again as soon as it is done.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click
import rich.progress
from rich.console import Console

from .. import JobConfigError
from . import _dlq_records
from ._actor import operator
from ._config import StoreConfig, store_options
from ._errors import usage_error
from ._options import json_option, limit_option
from ._render import dead_letter_record, dead_letter_table, output_console, write_json_list

if TYPE_CHECKING:
    from ..aws import RedriveReport

QUEUE_HELP = "Only this queue's dead-letter queue (default: every queue's)."
NAME_HELP = "Only this handler's dead jobs (e.g. report.build)."
PEEK_HELP = (
    "List the messages themselves, received and handed back: their ids, receive counts and "
    "those that are no recorded dead job. Raises each one's receive count by one."
)
PEEK_WARNING = (
    "Peeking receives each dead-letter message: SQS counts every receive, so each "
    "message's receive count goes up by one."
)


@click.group()
def dlq() -> None:
    """List and redrive the dead-letter queues."""


@dlq.command(name="list")
@click.option("--queue", "-q", help=QUEUE_HELP)
@click.option("--name", metavar="NAME", help=NAME_HELP)
@limit_option("At most this many dead jobs (with --peek, messages).", default=100, maximum=1000)
@click.option("--peek", is_flag=True, help=PEEK_HELP)
@json_option(
    "a list with one object per dead job (per message with --peek), its job whole; "
    "message_id, receive_count and sent_at only a peek fills, else null"
)
@store_options
def list_dead_letters(
    queue: str | None,
    name: str | None,
    limit: int,
    peek: bool,
    as_json: bool,
    store: StoreConfig,
) -> None:
    """List the dead jobs from their records, newest first, and each DLQ's depth.

    No message is received from the dead-letter queues, so their receive counts stay as
    they are; a line per queue says how many of its messages are no recorded dead job.
    --peek lists the messages themselves instead (received, then handed back), which
    raises each one's receive count by one.
    """
    if peek:
        peek_dead_letters(queue, name, limit, as_json, store)
        return
    with store.open() as opened:
        dead = _dlq_records.read(opened, queue, name, limit)
    if as_json:
        write_json_list(_dlq_records.json_records(dead), sys.stdout)
    else:
        _dlq_records.show(dead, output_console())


def peek_dead_letters(
    queue: str | None, name: str | None, limit: int, as_json: bool, store: StoreConfig
) -> None:
    """``list --peek``: the messages themselves, received and handed back; the warning
    comes once they were, before the output (a refusal stays one line)."""
    with store.open() as opened:
        try:
            letters = opened.sync.dead_letters(queue, limit=limit, name=name)
        except JobConfigError as error:
            raise usage_error(error) from error
    click.echo(PEEK_WARNING, err=True)
    if as_json:
        write_json_list((dead_letter_record(letter) for letter in letters), sys.stdout)
        return
    console = output_console()
    where = f"queue {queue}" if queue else "every queue"
    named = f" named {name}" if name else ""
    console.print(dead_letter_table(f"Dead letters{named} of {where} ({len(letters)})", letters))
    if len(letters) == limit:
        console.print(f"Showing the first {limit}; raise --limit (up to 1000) for more.")


@dlq.command()
@click.option("--queue", "-q", help=QUEUE_HELP)
@click.option(
    "--name",
    metavar="NAME",
    help="Only this handler's jobs; every other message stays in the dead-letter queue.",
)
@limit_option("At most this many messages  [default: all]", default=None)
@store_options
def redrive(queue: str | None, name: str | None, limit: int | None, store: StoreConfig) -> None:
    """Send the jobs in the dead-letter queues back to their queues, attempts reset."""
    with store.open() as opened, progress(Console(stderr=True), limit) as on_progress:
        try:
            report = opened.sync.redrive(
                queue, limit=limit, on_progress=on_progress, name=name, by=operator()
            )
        except JobConfigError as error:
            raise usage_error(error) from error
    click.echo(summary(report, name))


def summary(report: RedriveReport, name: str | None = None) -> str:
    line = (
        f"Redriven {report.redriven} job(s) to their queues; discarded {report.discarded} "
        f"message(s) of finished or missing jobs; skipped {report.skipped} message(s), "
        "left in the dead-letter queue"
    )
    if name is not None:
        line += f"; passed over {report.passed_over} message(s) not of {name}, left there too"
    return line


@contextmanager
def progress(console: Console, limit: int | None) -> Iterator[Callable[[RedriveReport], None]]:
    """A live line of counts while a redrive runs, on a terminal only (logs stay clean)."""
    if not console.is_terminal:
        yield lambda report: None
        return
    bar = rich.progress.Progress(
        rich.progress.SpinnerColumn(),
        rich.progress.TextColumn("[bold]redriving"),
        rich.progress.BarColumn(),
        rich.progress.MofNCompleteColumn(),
        rich.progress.TimeElapsedColumn(),
        rich.progress.TextColumn("{task.fields[counts]}"),
        console=console,
        transient=True,
    )
    task = bar.add_task("redrive", total=limit, counts="")

    def update(report: RedriveReport) -> None:
        counts = (
            f"redriven {report.redriven}  discarded {report.discarded}  skipped {report.skipped}"
        )
        bar.update(task, completed=report.total, counts=counts)

    with bar:
        yield update
