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
so producers and Lambda functions do not pay for them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import click

from ..core.text import safe_line
from ._config import TARGET
from ._dashboard import dashboard
from ._demo import demo
from ._dlq import dlq
from ._enqueue import enqueue
from ._errors import CommandFailed, explained, one_line, redacted_traceback
from ._infra import infra
from ._jobs import jobs
from ._local import emulator
from ._reconcile import reconcile
from ._stats import stats
from ._worker import worker


@dataclass
class CliState:
    """Global options, passed to every command as the click context object.

    Mutable on purpose: a subcommand's context shares the root's object, so ``--debug``
    given after the subcommand turns it on for everyone who reads it.
    """

    debug: bool = False


class SqsJobsGroup(click.Group):
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
            root = ctx.find_root().obj
            if isinstance(root, CliState) and root.debug:
                sys.stderr.write(redacted_traceback())
            message = explained(error, ctx.meta.get(TARGET, {})) or one_line(error)
            raise CommandFailed(message) from error


@click.group(cls=SqsJobsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks and every job event.")
@click.version_option(package_name="sqsjobs", prog_name="sqsjobs")
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


for command in (worker, enqueue, jobs, dlq, stats, reconcile, infra, demo, dashboard):
    accept_debug(command)
    main.add_command(command)
main.add_command(emulator)
