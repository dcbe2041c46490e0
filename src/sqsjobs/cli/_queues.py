"""``sqsjobs queues``: pause a queue for the whole fleet, resume it, and list the queues.

A pause is one write to the job table (``flows.pauses``); every worker and Lambda
handler of the table notices it within seconds and starts no job of that queue, while
running jobs finish and enqueues are kept. ``list`` shows each queue with its state,
its messages and how long its job due first has waited (one ``stats`` read, the cost
of ``sqsjobs stats``). A queue this store does not know is bad usage (exit 2).
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime

import click

from .. import JobConfigError, SyncJobQueue
from ..core.attention import duration
from ._config import StoreConfig, store_options
from ._errors import usage_error
from ._options import json_option
from ._render import output_console, table, write_json_list
from ._render_stats import ago

PAUSED = (
    "Paused queue {queue}: within seconds no worker or Lambda function starts a job of it; "
    "running jobs finish, and enqueues are kept until `sqsjobs queues resume {queue}`."
)
RESUMED = "Resumed queue {queue}: workers start its jobs again within seconds."


@click.group()
def queues() -> None:
    """Pause, resume and list the queues."""


@queues.command()
@click.argument("queue")
@store_options
def pause(queue: str, store: StoreConfig) -> None:
    """Pause QUEUE for every worker and Lambda function; its jobs wait, none is lost."""
    _switch(queue, store, paused=True)
    click.echo(PAUSED.format(queue=queue))


@queues.command()
@click.argument("queue")
@store_options
def resume(queue: str, store: StoreConfig) -> None:
    """Resume QUEUE: workers start its jobs again within seconds."""
    _switch(queue, store, paused=False)
    click.echo(RESUMED.format(queue=queue))


def _switch(queue: str, store: StoreConfig, *, paused: bool) -> None:
    """Pause or resume ``queue``; a queue the store does not know is bad usage."""
    with store.open() as opened:
        producer = SyncJobQueue(opened)
        try:
            producer.pause(queue) if paused else producer.resume(queue)
        except JobConfigError as error:
            raise usage_error(error) from error


@queues.command(name="list")
@json_option("a list with one object per queue")
@store_options
def list_queues(as_json: bool, store: StoreConfig) -> None:
    """List the queues: paused or running, their messages, and the oldest waiting job."""
    now = time.time()
    with store.open() as opened:
        paused = opened.sync.paused(now)
        found = opened.sync.stats()
    if as_json:
        write_json_list(
            (
                {
                    "queue": queue.queue,
                    "paused": queue.queue in paused,
                    "paused_at": _iso(paused.get(queue.queue)),
                    "messages": queue.messages,
                    "in_flight": queue.in_flight,
                    "delayed": queue.delayed,
                    "dead_letter_messages": queue.dead_letter_messages,
                    "oldest_queued_at": _iso_datetime(queue.oldest_queued_at),
                }
                for queue in found
            ),
            sys.stdout,
        )
        return
    shown = table("Queues", "queue", "state", "visible", "in flight", "delayed", "oldest queued")
    for queue in found:
        since = paused.get(queue.queue)
        state = "running" if since is None else f"paused {duration(now - since)} ago"
        oldest = "" if queue.oldest_queued_at is None else ago(queue.oldest_queued_at, now)
        shown.add_row(
            queue.queue,
            state,
            str(queue.messages),
            str(queue.in_flight),
            str(queue.delayed),
            oldest,
        )
    output_console().print(shown)


def _iso(at: float | None) -> str | None:
    return None if at is None else datetime.fromtimestamp(at, UTC).isoformat()


def _iso_datetime(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()
