"""``sqsjobs jobs``: read and steer job records (list, show, cancel, retry).

These read the DynamoDB records, the source of truth, through the store's blocking face:
one-off commands need no event loop and no asyncio clients. A job that does not exist
(never did, or its retention ended) is a failure, exit 1, as is cancelling one that
already finished or retrying one that is not dead. ``show``, ``cancel`` and ``retry``
take a full id or a unique prefix of one (``_ids``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click
from rich.console import Group, RenderableType

from .. import JobConfigError, JobPage, JobStatus, SyncJobQueue
from ..core.lifecycle import CANCELLABLE
from ._actor import operator
from ._config import StoreConfig, store_options
from ._errors import CommandFailed, usage_error
from ._ids import missing, resolve
from ._listing import Listing
from ._options import json_option, limit_option
from ._render import (
    job_detail,
    job_record,
    job_table,
    output_console,
    write_json,
    write_json_list,
)
from ._watch import watch, watch_option

if TYPE_CHECKING:
    from ..aws import SqsJobStore

STATUS_NAMES = [status.value for status in JobStatus]
CANCELLABLE_NAMES = ", ".join(sorted(status.value for status in CANCELLABLE))
FIRST_PAGE = 50  # what fits on a screen
ALL_PAGE = 1000  # the most one page may hold: fewest queries for --all


@click.group()
def jobs() -> None:
    """List, show, cancel and retry jobs."""


@jobs.command(name="list")
@click.option("--queue", "-q", help="Only this queue (default: every queue of the store).")
@click.option(
    "--status",
    "-s",
    "statuses",
    multiple=True,
    type=click.Choice(STATUS_NAMES),
    help="Only jobs in this status; repeat for several.",
)
@click.option("--name", help="Only jobs of this handler name.")
@click.option("--tenant", help="Only jobs of this tenant.")
@limit_option(
    "At most this many jobs; with --all, jobs a page  "
    f"[default: {FIRST_PAGE}; with --all, {ALL_PAGE}]",
    default=None,
    maximum=ALL_PAGE,
)
@click.option(
    "--newest/--oldest",
    "newest",
    default=None,
    help="Newest or oldest jobs first  [default: newest first when every --status is "
    "an ended one (completed, dead, cancelled), else oldest first]",
)
@click.option(
    "--all", "every", is_flag=True, help="Every matching job, page after page, as they come."
)
@json_option("a list with one object per job")
@watch_option("the first page (not with --all)")
@store_options
def list_jobs(
    queue: str | None,
    statuses: tuple[str, ...],
    name: str | None,
    tenant: str | None,
    limit: int | None,
    newest: bool | None,
    every: bool,
    as_json: bool,
    watch_every: float | None,
    store: StoreConfig,
) -> None:
    """List jobs as a table; those that ended (--status dead) newest first.

    Jobs come in the order they were created: oldest first, or newest first when every
    --status is one that ended (completed, dead, cancelled); --newest and --oldest
    choose. With --all every matching job is read, a page at a time, and each page
    printed as it arrives (with --json, still one list).
    """
    limit = limit or (ALL_PAGE if every else FIRST_PAGE)
    listing = Listing.build(queue, statuses, name, tenant, limit, newest)
    if every and watch_every is not None:
        raise usage_error("--watch shows the first page again and again; it takes no --all")
    with store.open() as opened:
        if watch_every is not None:
            watch_first_page(listing, opened, watch_every, as_json=as_json)
            return
        pages = listing.pages(opened, every=every)
        if as_json:
            write_json_list((job_record(job) for page in pages for job in page.jobs), sys.stdout)
            return
        print_tables(listing, pages, every=every)


def print_tables(listing: Listing, pages: Iterator[JobPage], *, every: bool) -> None:
    """A table per page, printed as it arrives: ``--all`` over many jobs starts at once."""
    console = output_console()
    shown, more = 0, False
    for page in pages:
        if shown == 0 or page.jobs:
            console.print(job_table(listing.title() if shown == 0 else "", page.jobs))
        shown, more = shown + len(page.jobs), page.next_cursor is not None
    if every:
        console.print(f"{shown} job(s)")
    elif more:
        console.print(
            f"Showing the {listing.end} {shown}; raise --limit (up to 1000) or pass --all."
        )


def watch_first_page(listing: Listing, store: SqsJobStore, every: float, *, as_json: bool) -> None:
    """``--watch``: the first page, read again every ``every`` seconds (see ``_watch``)."""

    def first() -> JobPage:
        return next(listing.pages(store, every=False))

    def view() -> RenderableType:
        page = first()
        shown = job_table(listing.title(), page.jobs)
        if page.next_cursor is None:
            return shown
        more = f"Showing the {listing.end} {len(page.jobs)}; raise --limit (up to 1000)."
        return Group(shown, more)

    document = (lambda: [job_record(job) for job in first().jobs]) if as_json else None
    watch(every, view, document, output_console())


ID_HELP = (
    "ID is a job's full id or a unique prefix of it (at least 6 characters; "
    "a prefix reads every job record to find it)."
)


@jobs.command(epilog=ID_HELP)
@click.argument("job_id", metavar="ID")
@json_option("the job as one object")
@store_options
def show(job_id: str, as_json: bool, store: StoreConfig) -> None:
    """Show every field of job ID, its payload and result as JSON."""
    with store.open() as opened:
        producer = SyncJobQueue(opened)
        job_id = resolve(producer, job_id)
        job = producer.get(job_id)
    if job is None:
        raise CommandFailed(missing(job_id))
    if as_json:
        write_json(job_record(job), sys.stdout)
    else:
        output_console().print(job_detail(job))


@jobs.command(epilog=ID_HELP)
@click.argument("job_id", metavar="ID")
@store_options
def cancel(job_id: str, store: StoreConfig) -> None:
    """Cancel job ID unless it has finished; a running one stops at its next heartbeat."""
    with store.open() as opened:
        producer = SyncJobQueue(opened)
        job_id = resolve(producer, job_id)
        if not producer.cancel(job_id, by=operator()):
            job = producer.get(job_id)
            if job is None:
                raise CommandFailed(missing(job_id))
            raise CommandFailed(
                f"Job {job_id} is already {job.status.value}; "
                f"only {CANCELLABLE_NAMES} jobs can be cancelled"
            )
    click.echo(f"Cancelled job {job_id}")


@jobs.command(epilog=ID_HELP)
@click.argument("job_id", metavar="ID")
@store_options
def retry(job_id: str, store: StoreConfig) -> None:
    """Run dead job ID again: queued at once, its attempts reset, its last error kept.

    Its copy in the dead-letter queue stays there; ``dlq redrive`` discards it once the
    job has finished.
    """
    with store.open() as opened:
        job_id = resolve(SyncJobQueue(opened), job_id)
        try:
            retried = opened.sync.retry(job_id, time.time(), by=operator())
        except JobConfigError as error:
            raise usage_error(error) from error
        if not retried:
            job = SyncJobQueue(opened).get(job_id)
            if job is None:
                raise CommandFailed(missing(job_id))
            raise CommandFailed(
                f"Job {job_id} is {job.status.value}; only dead jobs can be retried"
            )
    click.echo(f"Retrying job {job_id}: queued again with its attempts reset")
