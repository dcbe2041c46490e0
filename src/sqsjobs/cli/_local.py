"""``sqsjobs emulator``: a local AWS that other shells (and the other commands) can use.

The emulator runs in this process, in the foreground, until SIGINT or SIGTERM; it prints
the environment to paste into another shell, after which every ``sqsjobs`` command (and
any boto3 program) talks to it as it would to AWS. ``--stack`` deploys ``infra/`` into
it first, exactly as ``sqsjobs demo`` does, so ``SQSJOBS_STACK`` names a ready store.
``sqsjobs demo --keep`` ends the same way (``serve_until_stopped``).

The emulator's state lives in this process: stopping it forgets every queue and job.
"""

from __future__ import annotations

import shlex
import signal
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import click
from rich.console import Console

from ..worker.signals import STOP_SIGNALS
from ._config import STACK_ENV
from ._emulator import DEMO_ENVIRONMENT, DEMO_UNSET, emulated_aws
from ._errors import CommandFailed
from ._infra import deploy_with_progress

SIGNAL_CHECK_INTERVAL = 0.25
# What another shell needs besides the endpoint; the keys are the emulator's dummies.
# botocore 1.40 reads only AWS_DEFAULT_REGION; AWS_REGION is what newer SDKs read.
PASTED_VARIABLES = (
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
)


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    metavar="PORT",
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 to serve on; 0 picks a free one.",
)
@click.option(
    "--stack",
    metavar="NAME",
    help="Deploy infra/ into the emulator as stack NAME, ready for SQSJOBS_STACK.",
)
def emulator(port: int, stack: str | None) -> None:
    """Run a local AWS (SQS, DynamoDB, CloudFormation) until Ctrl-C or SIGTERM.

    Prints the environment variables that point other shells at it. Nothing is kept
    once it stops.
    """
    console = Console(highlight=False)
    with ExitStack() as running:
        try:
            endpoint = running.enter_context(emulated_aws(port=port))
        except OSError as error:
            hint = "pick another --port, or 0 for a free one"
            raise CommandFailed(f"{error}; {hint}") from error
        if stack:
            deploy_with_progress(console, stack, endpoint_url=endpoint)
        serve_until_stopped(endpoint, stack)


def serve_until_stopped(endpoint: str, stack: str | None) -> None:
    """Print the lines to paste, then block until SIGINT or SIGTERM."""
    with stop_signals() as stopped:
        click.echo(f"Local AWS emulator serving on {endpoint}. In another shell, run:\n")
        for line in paste_lines(endpoint, stack):
            click.echo(f"  {line}")
        click.echo("\nPress Ctrl-C (or send SIGTERM) to stop it; its queues and jobs go with it.")
        # A signal may be delivered to the server's thread, and Python runs its handler
        # only when the main thread next runs: waking up regularly guarantees that it does.
        while not stopped.wait(SIGNAL_CHECK_INTERVAL):
            pass
    click.echo("Emulator stopped.")


def paste_lines(endpoint: str, stack: str | None) -> list[str]:
    """The shell lines that point boto3 (and ``sqsjobs``) at the emulator."""
    values = {"AWS_ENDPOINT_URL": endpoint}
    values.update({name: DEMO_ENVIRONMENT[name] for name in PASTED_VARIABLES})
    if stack:
        values[STACK_ENV] = stack
    lines = [f"export {name}={shlex.quote(value)}" for name, value in values.items()]
    # A profile (or a real session token) in that shell would be used before the keys.
    return [*lines, f"unset {' '.join(DEMO_UNSET)} AWS_SESSION_TOKEN"]


@contextmanager
def stop_signals() -> Iterator[threading.Event]:
    """An event set by SIGINT or SIGTERM while inside; the previous handlers come back."""
    stopped = threading.Event()
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    for signum in STOP_SIGNALS:
        signal.signal(signum, lambda _signum, _frame: stopped.set())
    try:
        yield stopped
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
