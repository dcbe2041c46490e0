"""``sqsjobs demo``: run the shop scenario end to end and show what happened.

By default it starts the AWS emulator in this process, deploys ``infra/`` into it
through CloudFormation, builds the store from the stack's outputs (as a production
worker does with ``--stack``) and runs the scenario there, over real HTTP, SQS and
DynamoDB calls. ``--memory`` runs the same scenario on the in-process memory store.

Either way it enqueues the scenario's mix of jobs, runs a worker under a live progress
bar with the job events scrolling above it, and ends with the status of every job and
the dead letters. It needs no configuration and no AWS account. With ``--keep`` the
emulator keeps running afterwards, as ``sqsjobs emulator`` does, so the demo's jobs can
be inspected from another shell with the other commands. With ``--dashboard`` it ends
by serving the web dashboard on the demo's store (the emulator's, or the memory store)
until Ctrl-C, and prints its address.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import click
from rich.console import Console

from .. import Backoff, JobQueue, JobStatus, MemoryJobStore
from . import _demo_view as view
from ._dashboard import DEFAULT_PORT, dashboard_factory, serve_dashboard
from ._local import paste_lines, serve_until_stopped
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
@click.option(
    "--dashboard",
    "with_dashboard",
    is_flag=True,
    help="Afterwards, serve the web dashboard of the demo's jobs on 127.0.0.1 until Ctrl-C "
    "(needs the dashboard extra).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    metavar="PORT",
    help=f"With --dashboard: the port to serve it on (default {DEFAULT_PORT}; 0 picks a free one).",
)
@click.option(
    "--actions", is_flag=True, help="With --dashboard: allow retry, cancel and redrive from it."
)
@click.pass_context
def demo(
    ctx: click.Context,
    memory: bool,
    concurrency: int,
    timeout: float,
    keep: bool,
    with_dashboard: bool,
    port: int | None,
    actions: bool,
) -> None:
    """Run a realistic mix of jobs through a worker and show the outcome."""
    if keep and memory:
        raise click.UsageError("--keep keeps the emulator running; --memory has none to keep.")
    if (port is not None or actions) and not with_dashboard:
        raise click.UsageError("--port and --actions are options of --dashboard.")
    shown = Shown(
        dashboard_factory() if with_dashboard else None,
        DEFAULT_PORT if port is None else port,
        actions,
    )
    debug = bool(getattr(ctx.obj, "debug", False))
    console = Console(highlight=False)
    options = RunOptions(concurrency, timeout, debug)
    if memory:
        console.print("[bold]sqsjobs demo[/] on the in-process memory store\n")
        store = MemoryJobStore()
        asyncio.run(_run(console, JobQueue(store, backoff=DEMO_BACKOFF), options))
        shown.serve(store, None)
        return
    from ..aws import SqsJobStore
    from ._demo_aws import deployed_demo_stack

    console.print("[bold]sqsjobs demo[/] on a local AWS emulator (SQS, DynamoDB, CloudFormation)\n")
    with deployed_demo_stack(console, wait_time=DEMO_WAIT_TIME) as stack:
        asyncio.run(_run(console, JobQueue(stack.store, backoff=DEMO_BACKOFF), options))
        console.print(view.dead_letter_queues(stack.dead_letter_depths(), stack.dead_letters()))
        if shown.make is not None:
            if keep:
                click.echo("The emulator runs while the dashboard does. In another shell, run:\n")
                click.echo(
                    "".join(f"  {line}\n" for line in paste_lines(stack.endpoint_url, stack.name))
                )
            # A store of its own: the demo's closed its asyncio clients with the demo's loop.
            fresh = SqsJobStore.from_stack(stack.name, endpoint_url=stack.endpoint_url)
            shown.serve(fresh, fresh.aclose)
        elif keep:
            serve_until_stopped(stack.endpoint_url, stack.name)


@dataclass(frozen=True)
class Shown:
    """The dashboard that ``--dashboard`` asks for: ``make`` is ``None`` without it."""

    make: Callable[..., Any] | None
    port: int
    actions: bool

    def serve(self, store: Any, closing: Callable[[], Awaitable[None]] | None) -> None:
        if self.make is None:
            return
        app = self.make(store, actions=self.actions, title="sqsjobs demo")
        serve_dashboard(app, self.port, actions=self.actions, closing=closing)


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
