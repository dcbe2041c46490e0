"""``sqsjobs jobs``: read and steer job records (list, show, cancel, retry).

These read the DynamoDB records, the source of truth, through the store's blocking face:
one-off commands need no event loop and no asyncio clients. A job that does not exist
(never did, or its retention ended) is a failure, exit 1, as is cancelling one that
already finished or retrying one that is not dead.
"""

from __future__ import annotations

import time

import click
from rich.console import Console

from .. import JobConfigError, JobStatus, SyncJobQueue
from .._lifecycle import CANCELLABLE
from ._config import StoreConfig, store_options
from ._errors import CommandFailed, usage_error
from ._options import limit_option
from ._render import job_detail, job_table

STATUS_NAMES = [status.value for status in JobStatus]
CANCELLABLE_NAMES = ", ".join(sorted(status.value for status in CANCELLABLE))


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
@limit_option("At most this many jobs, oldest first.", default=50, maximum=1000)
@store_options
def list_jobs(queue: str | None, statuses: tuple[str, ...], limit: int, store: StoreConfig) -> None:
    """List jobs as a table, oldest first."""
    with store.open() as opened:
        try:
            page = SyncJobQueue(opened).list(queue=queue, status=statuses or None, limit=limit)
        except JobConfigError as error:
            raise usage_error(error) from error
    console = Console(highlight=False)
    which = f" ({' or '.join(statuses)})" if statuses else ""
    where = f"queue {queue}" if queue else "every queue"
    console.print(job_table(f"Jobs{which} in {where}", page.jobs))
    if page.next_cursor is not None:
        console.print(f"Showing the oldest {len(page.jobs)}; raise --limit (up to 1000) for more.")


@jobs.command()
@click.argument("job_id", metavar="ID")
@store_options
def show(job_id: str, store: StoreConfig) -> None:
    """Show every field of job ID, its payload and result as JSON."""
    with store.open() as opened:
        job = SyncJobQueue(opened).get(job_id)
    if job is None:
        raise CommandFailed(missing(job_id))
    Console(highlight=False).print(job_detail(job))


@jobs.command()
@click.argument("job_id", metavar="ID")
@store_options
def cancel(job_id: str, store: StoreConfig) -> None:
    """Cancel job ID unless it has finished; a running one stops at its next heartbeat."""
    with store.open() as opened:
        producer = SyncJobQueue(opened)
        if not producer.cancel(job_id):
            job = producer.get(job_id)
            if job is None:
                raise CommandFailed(missing(job_id))
            raise CommandFailed(
                f"Job {job_id} is already {job.status.value}; "
                f"only {CANCELLABLE_NAMES} jobs can be cancelled"
            )
    click.echo(f"Cancelled job {job_id}")


@jobs.command()
@click.argument("job_id", metavar="ID")
@store_options
def retry(job_id: str, store: StoreConfig) -> None:
    """Run dead job ID again: queued at once, its attempts reset, its last error kept.

    Its copy in the dead-letter queue stays there; ``dlq redrive`` discards it once the
    job has finished.
    """
    with store.open() as opened:
        try:
            retried = opened.sync.retry(job_id, time.time())
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


def missing(job_id: str) -> str:
    return f"No job {job_id!r} (unknown, or removed when its retention period ended)"
