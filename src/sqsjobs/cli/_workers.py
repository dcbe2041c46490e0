"""``sqsjobs workers``: the workers alive, from the presence records they keep.

Jobs that wait can mean no worker runs, every worker is busy, or the workers cannot
reach AWS; the counts of ``stats`` look the same for all three. Every worker (``sqsjobs
worker``, a ``JobWorker``, a Lambda execution environment) rewrites its presence record
every 30 s, and a record not rewritten for 90 s is gone (``core.presence``), so this
lists who is working now: where, on which release, on which queues, how busy, and when
each last claimed a job and last wrote its record. The releases in the fleet are summed
up, so a rolling upgrade can tell when no process of the old release is left. A worker
that runs but cannot write its record (no route to the table, a role without the
grant) logs why, once per outage, and is not listed.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from ..core.attention import duration
from ..core.presence import PRESENCE_TTL, versions
from ._config import StoreConfig, store_options
from ._options import json_option
from ._render import instant_adapter, output_console, table, write_json_list

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.table import Table

    from ..core.presence import WorkerPresence

WIDE_WORKERS = 130  # one table from this width; below it, who they are, then their load
WHO = ("worker", "host", "version", "queues")
LOAD = ("worker", "concurrency", "running", "started", "last claim", "heartbeat")
HEADERS = {"last claim": "last\nclaim"}


@click.command()
@json_option("a list with one object per worker alive")
@store_options
def workers(as_json: bool, store: StoreConfig) -> None:
    """List the workers alive: host, release, queues, load and last claim."""
    with store.open() as opened:
        now = time.time()
        found = opened.sync.presences(now)
    if as_json:
        write_json_list((presence_record(presence) for presence in found), sys.stdout)
        return
    console = output_console()
    if found:
        console.print(WorkersTables(found, now))
    console.print(summary(found))


class WorkersTables:
    """The workers alive, laid out for the width they are printed at: one table from
    ``WIDE_WORKERS`` columns, else two (who and where, then their load and times, the
    times without "ago"), so that at 80 columns no header breaks inside a word."""

    def __init__(self, found: list[WorkerPresence], now: float) -> None:
        self.found = found
        self.now = now

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.max_width >= WIDE_WORKERS:
            yield self._table("Workers alive", (*WHO, *LOAD[1:]), " ago")
        else:
            yield self._table("Workers alive", WHO, "")
            yield self._table("Their work (times: how long ago)", LOAD, "")

    def _table(self, title: str, columns: tuple[str, ...], suffix: str) -> Table:
        # Narrow, "last claim" takes two lines: the worker id keeps one at 80 columns.
        made = table(title, *(HEADERS.get(c, c) if not suffix else c for c in columns))
        for column in made.columns:
            if column.header in ("concurrency", "running"):
                column.justify = "right"
        for presence in self.found:
            cells = {
                "worker": presence.worker_id,
                "host": presence.host,
                "version": presence.version,
                "queues": ", ".join(presence.queues) or "-",
                "concurrency": str(presence.concurrency),
                "running": str(presence.running),
                "started": self._ago(presence.started_at, suffix),
                "last claim": "never"
                if presence.last_claim_at is None
                else self._ago(presence.last_claim_at, suffix),
                "heartbeat": self._ago(presence.heartbeat_at, suffix),
            }
            made.add_row(*(cells[column] for column in columns))
        return made

    def _ago(self, at: datetime, suffix: str) -> str:
        return duration(self.now - at.timestamp()) + suffix


def summary(found: list[WorkerPresence]) -> str:
    """One line: how many are alive, on which releases; or that none is, and why that may be."""
    if not found:
        return (
            f"No worker is alive: none wrote its presence record in the last {PRESENCE_TTL:g} s. "
            "Start one (sqsjobs worker MODULE:REGISTRY), or check the workers' logs: a "
            "worker that cannot reach the table cannot say it is there."
        )
    counted = versions(found)
    alive = "1 worker alive" if len(found) == 1 else f"{len(found)} workers alive"
    if len(counted) == 1:
        return f"{alive}, all on sqsjobs {next(iter(counted))}"
    releases = ", ".join(f"{count} on {version}" for version, count in counted.items())
    return f"{alive} on {len(counted)} releases of sqsjobs: {releases}"


def presence_record(presence: WorkerPresence) -> dict[str, Any]:
    """Every field of a presence record, instants in ISO 8601 UTC."""
    instants = instant_adapter()

    def instant(value: datetime | None) -> Any:
        return None if value is None else instants.dump_python(value, mode="json")

    return {
        "worker_id": presence.worker_id,
        "host": presence.host,
        "pid": presence.pid,
        "version": presence.version,
        "queues": list(presence.queues),
        "names": list(presence.names),
        "concurrency": presence.concurrency,
        "running": presence.running,
        "started_at": instant(presence.started_at),
        "last_claim_at": instant(presence.last_claim_at),
        "last_claims": {queue: instant(at) for queue, at in presence.last_claims.items()},
        "heartbeat_at": instant(presence.heartbeat_at),
        "expires_at": instant(presence.expires_at),
    }
