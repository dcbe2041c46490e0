"""The ``sqsjobs`` command line: one click group, one module per command group.

Every command runs inside ``SqsJobsGroup.invoke``, the single place that turns a failure
into an exit code: 0 on success, 2 on bad usage (click's own usage errors), 1 for
anything else, reported as one ``error: ...`` line on stderr. The traceback appears only
with ``--debug``, because an operator reading a deploy log needs the cause, not the stack.

Only this package imports click and rich; the ``sqsjobs`` package root never imports it,
so producers and Lambda functions do not pay for them.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass
from typing import IO, Any

import click

from ._demo import demo
from ._infra import infra

MAX_MESSAGE_CHARS = 300


@dataclass(frozen=True)
class CliState:
    """Global options, passed to every command as the click context object."""

    debug: bool = False


class CommandFailed(click.ClickException):
    """A command's failure, shown as one line; exit code 1."""

    exit_code = 1

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.message}", file=file or sys.stderr)


def one_line(error: BaseException) -> str:
    """The error as a single line: what went wrong, without the stack.

    sqsjobs' own errors already say what was wrong and what is allowed, so their message
    stands alone; anything else is prefixed with its type, since a bare ``KeyError``
    message (``'name'``) means nothing by itself.
    """
    text = " ".join(str(error).split())
    if not type(error).__module__.startswith("sqsjobs"):
        text = f"{type(error).__name__}: {text}" if text else type(error).__name__
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 1] + "…"
    return text or type(error).__name__


class SqsJobsGroup(click.Group):
    """A click group whose subcommands (and their subgroups) share one error policy."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as error:
            root = ctx.find_root().obj
            if isinstance(root, CliState) and root.debug:
                traceback.print_exc(file=sys.stderr)
            raise CommandFailed(one_line(error)) from error


@click.group(cls=SqsJobsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks and every job event.")
@click.version_option(package_name="sqsjobs", prog_name="sqsjobs")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Durable background jobs on SQS and DynamoDB."""
    ctx.obj = CliState(debug=debug)


main.add_command(demo)
main.add_command(infra)
