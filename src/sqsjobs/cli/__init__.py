"""The ``sqsjobs`` command line: one click group, one module per command group.

Every command runs inside ``SqsJobsGroup.invoke``, the single place that turns a failure
into an exit code: 0 on success, 2 on bad usage (click's usage errors, and input the
library refuses), 1 for anything else, reported as one ``error: ...`` line on stderr
(see ``_errors``). The traceback appears only with ``--debug``, because an operator
reading a deploy log needs the cause, not the stack; like the error line, it is shown
without the credentials an endpoint URL may carry. ``--debug`` is accepted before or
after the subcommand (``sqsjobs jobs show ID --debug``): every command gets the same
option, which turns on the one shared ``CliState``.

Only this package imports click and rich; the ``sqsjobs`` package root never imports it,
so producers and Lambda functions do not pay for them. Within it, each command's module
loads when that command runs (``COMMANDS`` names them, with the short help that
``sqsjobs --help`` lists): ``sqsjobs --version`` and ``--help`` import neither boto3 nor
rich, and ``sqsjobs jobs show`` not the dashboard, the demo or the worker.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import click

from .. import __version__
from ..core.text import safe_line

# ``ctx.meta`` key: the exception that stopped a command's module from loading.
_LOAD_FAILURE = "sqsjobs.load_failure"


class Lazy(NamedTuple):
    """A command of the root group before its module is imported."""

    target: str  # "module:attribute", the module relative to this package
    help: str  # the first sentence of its help, as ``get_short_help_str`` takes it
    debug: bool = True  # whether it gets the ``--debug`` option (``accept_debug``)

    def load(self) -> click.Command:
        """Import the command's module; the command itself."""
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module, __name__), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is {command!r}, not a click command")
        return command


# Every command, by name: a new one is added here (tests/cli/test_startup.py checks that
# each help is its command's own, and that ``sqsjobs --help`` lists them all).
COMMANDS: Mapping[str, Lazy] = {
    "dashboard": Lazy(
        "._dashboard:dashboard",
        "Serve a web dashboard of the queues, jobs and dead letters on 127.0.0.1.",
    ),
    "demo": Lazy(
        "._demo:demo", "Run a realistic mix of jobs through a worker and show the outcome."
    ),
    "dlq": Lazy("._dlq:dlq", "List and redrive the dead-letter queues."),
    "emulator": Lazy(
        "._local:emulator",
        "Run a local AWS (SQS, DynamoDB, CloudFormation) until Ctrl-C or SIGTERM.",
        debug=False,
    ),
    "enqueue": Lazy(
        "._enqueue:enqueue", "Enqueue job NAME; print its id and whether it was a duplicate."
    ),
    "infra": Lazy(
        "._infra:infra",
        "Print or deploy the CloudFormation templates (table, queues, workers); package a Lambda.",
    ),
    "jobs": Lazy("._jobs:jobs", "List, show, cancel and retry jobs."),
    "records": Lazy(
        "._records:records",
        "Check which record formats the job table still holds.",
    ),
    "queues": Lazy("._queues:queues", "Pause, resume and list the queues."),
    "reconcile": Lazy(
        "._reconcile:reconcile",
        "Re-send lost messages and record jobs the dead-letter queue took; print what changed.",
    ),
    "stats": Lazy(
        "._stats:stats",
        "Show each queue's jobs by status, its SQS messages and its dead-letter queue.",
    ),
    "worker": Lazy(
        "._worker:worker", "Run jobs with the handlers in MODULE:REGISTRY until SIGTERM or Ctrl-C."
    ),
    "workers": Lazy(
        "._workers:workers", "List the workers alive: host, release, queues, load and last claim."
    ),
}


@dataclass
class CliState:
    """Global options, passed to every command as the click context object.

    Mutable on purpose: a subcommand's context shares the root's object, so ``--debug``
    given after the subcommand turns it on for everyone who reads it.
    """

    debug: bool = False


class LazyGroup(click.Group):
    """A click group whose commands are imported when first used (click's lazy loading).

    ``lazy`` maps each name to its ``Lazy`` entry; the help lists them from it, without
    importing any. A command is loaded once, then kept in ``commands`` like an added one.
    """

    def __init__(self, *args: Any, lazy: Mapping[str, Lazy] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.lazy, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        entry = self.lazy.get(cmd_name)
        if command is not None or entry is None:
            return command
        try:
            command = entry.load()
        except Exception as error:
            ctx.meta[_LOAD_FAILURE] = error
            raise
        if entry.debug:
            accept_debug(command)
        self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their short help, as click lists them, without loading any."""
        rows: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            entry = self.lazy.get(name)
            # A stand-in with the same help: click shortens it to the width the same way.
            command = (
                self.get_command(ctx, name)
                if entry is None or name in self.commands
                else click.Command(name, help=entry.help)
            )
            if command is not None and not command.hidden:
                rows.append((name, command))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as error:
            unknown: Any = error
            if not hasattr(unknown, "command_name"):
                raise
            # click (8.4 and later) suggests close names among the loaded commands only.
            raise type(unknown)(
                unknown.command_name, possibilities=self.list_commands(ctx), ctx=ctx
            ) from None


class SqsJobsGroup(LazyGroup):
    """A click group whose subcommands (and their subgroups) share one error policy."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            # click quotes most arguments with repr, but not all ("Got unexpected extra
            # argument (...)" shows them raw): the error line gets the escapes and
            # redactions of every other line the command line prints.
            message = error.format_message()
            if safe_line(message) == message:
                raise
            raise click.UsageError(safe_line(message), error.ctx) from error
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            # The reader went away (``sqsjobs jobs list --json | head``): click ends the
            # process quietly, exit status 1, as it does for any closed pipe.
            raise
        except Exception as error:
            if error is ctx.meta.get(_LOAD_FAILURE):
                # The command's module did not import: a missing extra (``sqsjobs.__main__``
                # says which to install) or a broken install, whose traceback stays whole.
                raise
            from ..aws.explain import explained, one_line
            from ._config import TARGET
            from ._errors import CommandFailed, redacted_traceback

            root = ctx.find_root().obj
            if isinstance(root, CliState) and root.debug:
                sys.stderr.write(redacted_traceback())
            message = explained(error, ctx.meta.get(TARGET, {})) or one_line(error)
            raise CommandFailed(message) from error


@click.group(
    cls=SqsJobsGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option("--debug", is_flag=True, help="Show tracebacks and every job event.")
# The package's own version, which its metadata is built from: reading the installed
# metadata instead (``package_name=``) would import importlib.metadata for it.
@click.version_option(__version__, prog_name="sqsjobs")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Durable background jobs on SQS and DynamoDB."""
    ctx.obj = CliState(debug=debug)


def _turn_on_debug(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    state = ctx.find_root().obj
    if value and isinstance(state, CliState):
        state.debug = True


def accept_debug(command: click.Command) -> None:
    """Give ``command`` (and, for a group, each of its commands) a ``--debug`` flag."""
    command.params.append(
        click.Option(
            ["--debug"],
            is_flag=True,
            expose_value=False,
            callback=_turn_on_debug,
            help="Show tracebacks and every job event (also accepted before the command).",
        )
    )
    if isinstance(command, click.Group):
        for each in command.commands.values():
            accept_debug(each)
