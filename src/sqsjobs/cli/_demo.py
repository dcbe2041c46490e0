"""``sqsjobs demo``: run the shop scenario end to end and show what happened.

By default it starts the AWS emulator in this process, deploys ``infra/`` into it
through CloudFormation, builds the store from the stack's outputs (as a production
worker does with ``--stack``) and runs the scenario there, over real HTTP, SQS and
DynamoDB calls. ``--memory`` runs the same scenario on the in-process memory store.

Either way it enqueues the scenario's mix of jobs, runs a worker under a live progress
bar with the job events scrolling above it, and ends with the status of every job and
the dead letters. It needs no configuration and no AWS account. With ``--keep`` the
emulator keeps running afterwards, as ``sqsjobs emulator`` does, so the demo's jobs can
be inspected from another shell with the other commands.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import click
from rich.console import Console

from .. import Backoff, JobQueue, JobStatus, MemoryJobStore
from . import _demo_view as view
from ._local import serve_until_stopped
from ._scenario import enqueue_plan, job_ids, run_until_finished

# Short retry delays so the job that fails twice is done in about a second.
DEMO_BACKOFF = Backoff(base=0.25, max=1.0)
# A worker's long poll on the emulator: short enough that stopping it is quick.
DEMO_WAIT_TIME = 2.0


@click.command()
@click.option(
    "--memory",
    is_flag=True,
    help="Use the in-process memory store instead of the local AWS emulator.",
)
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
@click.option(
    "--keep",
    is_flag=True,
    help="Afterwards, keep the emulator running (until Ctrl-C or SIGTERM) and print the "
    "environment that lets other shells inspect the demo's jobs.",
)
@click.pass_context
def demo(ctx: click.Context, memory: bool, concurrency: int, timeout: float, keep: bool) -> None:
    """Run a realistic mix of jobs through a worker and show the outcome."""
    if keep and memory:
        raise click.UsageError("--keep keeps the emulator running; --memory has none to keep.")
    debug = bool(getattr(ctx.obj, "debug", False))
    console = Console(highlight=False)
    options = RunOptions(concurrency, timeout, debug)
    if memory:
        console.print("[bold]sqsjobs demo[/] on the in-process memory store\n")
        asyncio.run(_run(console, JobQueue(MemoryJobStore(), backoff=DEMO_BACKOFF), options))
        return
    from ._demo_aws import deployed_demo_stack

    console.print("[bold]sqsjobs demo[/] on a local AWS emulator (SQS, DynamoDB, CloudFormation)\n")
    with deployed_demo_stack(console, wait_time=DEMO_WAIT_TIME) as stack:
        asyncio.run(_run(console, JobQueue(stack.store, backoff=DEMO_BACKOFF), options))
        console.print(view.dead_letter_queues(stack.dead_letter_depths(), stack.dead_letters()))
        if keep:
            serve_until_stopped(stack.endpoint_url, stack.name)


@dataclass(frozen=True)
class RunOptions:
    concurrency: int
    timeout: float
    debug: bool


async def _run(console: Console, queue: JobQueue, options: RunOptions) -> None:
    """The scenario on ``queue``, whatever its store, rendered to ``console``."""
    started = time.monotonic()
    try:
        with view.event_log(console, debug=options.debug):
            enqueued = await enqueue_plan(queue)
            console.print(view.enqueue_table(enqueued))
            ids = job_ids(enqueued)
            console.print(f"\nRunning a worker with concurrency {options.concurrency}:")
            with view.live_progress(console, len(ids)) as on_progress:
                jobs = await run_until_finished(
                    queue,
                    ids,
                    concurrency=options.concurrency,
                    timeout=options.timeout,
                    on_progress=on_progress,
                )
    finally:
        await _close(queue)
    console.print()
    console.print(view.status_table(jobs))
    console.print(view.summary(enqueued, jobs, time.monotonic() - started))
    console.print()
    console.print(view.dead_letters([job for job in jobs if job.status is JobStatus.DEAD]))


async def _close(queue: JobQueue) -> None:
    """Close the store's clients on this loop (the memory store has none)."""
    aclose = getattr(queue.store, "aclose", None)
    if aclose is not None:
        await aclose()
