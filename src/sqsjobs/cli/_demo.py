"""``sqsjobs demo``: run the shop scenario end to end and show what happened.

It enqueues the scenario's mix of jobs, runs a worker under a live progress bar with the
job events scrolling above it, and ends with the status of every job and the
dead letters. It needs no configuration and no AWS account.
"""

from __future__ import annotations

import asyncio
import time

import click
from rich.console import Console

from .. import Backoff, JobQueue, MemoryJobStore
from . import _demo_view as view
from ._scenario import enqueue_plan, job_ids, run_until_settled

# Short retry delays so the job that fails twice is done in about a second.
DEMO_BACKOFF = Backoff(base=0.25, max=1.0)


@click.command()
@click.option(
    "--concurrency",
    type=click.IntRange(1, 32),
    default=3,
    show_default=True,
    help="Jobs the worker runs at once.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0, min_open=True),
    default=60.0,
    show_default=True,
    help="Seconds to wait for every job to finish before giving up.",
)
@click.pass_context
def demo(ctx: click.Context, concurrency: int, timeout: float) -> None:
    """Run a realistic mix of jobs through a worker and show the outcome."""
    debug = bool(getattr(ctx.obj, "debug", False))
    console = Console(highlight=False)
    asyncio.run(_demo(console, concurrency=concurrency, timeout=timeout, debug=debug))


async def _demo(console: Console, *, concurrency: int, timeout: float, debug: bool) -> None:
    store = MemoryJobStore()
    console.print("[bold]sqsjobs demo[/] on the in-process memory store\n")
    queue = JobQueue(store, backoff=DEMO_BACKOFF)
    await _run(console, queue, concurrency=concurrency, timeout=timeout, debug=debug)


async def _run(
    console: Console, queue: JobQueue, *, concurrency: int, timeout: float, debug: bool
) -> None:
    """The scenario on ``queue``, whatever its store, rendered to ``console``."""
    started = time.monotonic()
    with view.event_log(console, debug=debug):
        enqueued = await enqueue_plan(queue)
        console.print(view.enqueue_table(enqueued))
        ids = job_ids(enqueued)
        console.print(f"\nRunning a worker with concurrency {concurrency}:")
        with view.live_progress(console, len(ids)) as on_progress:
            jobs = await run_until_settled(
                queue, ids, concurrency=concurrency, timeout=timeout, on_progress=on_progress
            )
    console.print()
    console.print(view.status_table(jobs))
    console.print(view.summary(enqueued, jobs, time.monotonic() - started))
    console.print()
    console.print(view.dead_letters(jobs))
