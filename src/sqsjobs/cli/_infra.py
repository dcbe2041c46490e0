"""``sqsjobs infra``: print the shipped CloudFormation templates, or deploy one.

``deploy`` creates or updates a stack and waits for CloudFormation, printing each stack
event as it appears (a deploy can take minutes; silence looks like a hang), then one line
saying what it did (``Stack app created (41.2s)``, ``updated``, or ``unchanged (no
changes)``: a CI log, where no spinner shows, says it too), then the stack's outputs,
which are what ``--stack`` and ``SqsJobStore.from_stack`` read. A stack that settled
without outputs its template declares fails the deploy (exit 1, naming them: see
``infra._stack``). The emulator and the demo deploy through ``deploy_with_progress``
too, so all show the same thing.
"""

from __future__ import annotations

import time
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from ..core.text import escape_controls
from ..infra import (
    TEMPLATES,
    DeployOutcome,
    StackDeployError,
    StackEvent,
    StackOutputs,
    StackOutputsMissing,
    WorkerSetupError,
    deploy_stack,
    job_parameters_for,
    preview_stack,
    template_parameters,
    template_text,
)
from ._config import AwsConfig, aws_options
from ._errors import CommandFailed, usage_error
from ._infra_package import package
from ._infra_workers import chosen_worker, deploy_worker, preview_worker, worker_options
from ._preview import preview_view
from ._render import literal, mapping_table, output_console

EVENT_COLUMNS = (22, 26, 18)  # widths: logical id, resource type, status


@click.group()
def infra() -> None:
    """Print or deploy the CloudFormation templates (table, queues, workers); package a Lambda."""


infra.add_command(package)


@infra.command()
@click.option(
    "--name",
    type=click.Choice(TEMPLATES),
    default="sqsjobs",
    show_default=True,
    help="sqsjobs: table and one queue; sqsjobs-queue: one more queue for that table.",
)
def template(name: str) -> None:
    """Print a template's YAML, e.g. to review it or deploy it with other tools."""
    click.echo(template_text(name), nl=False)


def parse_parameters(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str]:
    """``KEY=VALUE`` options as a mapping; a malformed one is a usage error."""
    parameters: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", ctx, param)
        parameters[key.strip()] = text
    return parameters


@infra.command()
@click.option("--stack", required=True, metavar="NAME", help="The stack to create or update.")
@click.option(
    "--template",
    "template_name",
    type=click.Choice(TEMPLATES),
    default="sqsjobs",
    show_default=True,
    help="Which shipped template to deploy.",
)
@click.option(
    "--parameter",
    "-p",
    "parameters",
    multiple=True,
    metavar="KEY=VALUE",
    callback=parse_parameters,
    help="A template parameter, e.g. QueueName=emails; repeat for more. "
    "On update, parameters not given keep their current values.",
)
@click.option(
    "--tag",
    "tags",
    multiple=True,
    metavar="KEY=VALUE",
    callback=parse_parameters,
    help="A stack tag, which CloudFormation copies to every resource that takes tags; "
    "repeat for more. On update, tags are added to the stack's current ones.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Change nothing: print the parameters the deploy would pass and the changes "
    "CloudFormation computes for them (a change set, deleted once read).",
)
@worker_options(parse_parameters)
@aws_options
def deploy(
    stack: str,
    template_name: str,
    parameters: dict[str, str],
    tags: dict[str, str],
    dry_run: bool,
    ecs_worker: bool,
    lambda_worker: bool,
    worker_parameters: dict[str, str],
    aws: AwsConfig,
) -> None:
    """Create or update a stack, show its progress, and print its outputs; with
    --ecs-worker or --lambda-worker, then the stack of its workers.

    Every ``-p`` and ``-w`` key is checked against its template's parameters before
    anything is sent, so a typo is refused (exit 2, naming the valid keys) instead of
    half-deploying.
    """
    check_parameters(template_name, parameters)
    kinds = {"ecs": ecs_worker, "lambda": lambda_worker}
    worker = chosen_worker(stack, template_name, kinds, worker_parameters)
    if worker is not None:
        try:
            parameters = job_parameters_for(worker, parameters)
        except WorkerSetupError as error:
            raise usage_error(str(error)) from error
    console = output_console()
    if dry_run:
        show_preview(console, stack, template_name, parameters, tags, aws)
        if worker is not None:
            preview_worker(console, worker, tags, aws)
        return
    try:
        outputs = deploy_with_progress(
            console,
            stack,
            template=template_name,
            parameters=parameters,
            tags=tags,
            **aws.operator_arguments(),
        )
    except StackOutputsMissing as error:
        # Whole, where an error line loses the middle of a long message: every name
        # missing and the fix are what the operator acts on.
        raise CommandFailed(str(error)) from error
    console.print(mapping_table(f"Outputs of stack {stack}", "output", "value", outputs))
    if worker is not None:
        deploy_worker(console, worker, outputs, tags, aws, deploy_with_progress)


def show_preview(
    console: Console,
    stack: str,
    template_name: str,
    parameters: dict[str, str],
    tags: dict[str, str],
    aws: AwsConfig,
) -> None:
    """``deploy --dry-run``: the parameters and the change set (``infra._preview``)."""
    try:
        preview = preview_stack(
            stack,
            template=template_name,
            parameters=parameters,
            tags=tags,
            **aws.operator_arguments(),
        )
    except StackDeployError as error:
        raise CommandFailed(str(error)) from error
    console.print(preview_view(preview, template_name))


def check_parameters(template_name: str, parameters: dict[str, str]) -> None:
    """Refuse keys the template does not declare: bad usage, with the keys it does."""
    declared = template_parameters(template_name)
    unknown = [key for key in parameters if key not in declared]
    if unknown:
        raise usage_error(
            f"Unknown parameter {', '.join(map(repr, unknown))} for template "
            f"{template_name}: valid parameters are {', '.join(declared)}"
        )


def deploy_with_progress(console: Console, stack: str, **kwargs: Any) -> StackOutputs:
    """``deploy_stack`` under a spinner, one line per stack event, then one saying what it
    did; the stack's outputs."""
    started = time.monotonic()
    with console.status(
        Text.assemble("Deploying stack ", literal(stack, "bold"), " through CloudFormation")
    ):
        outputs = deploy_stack(stack, on_event=lambda e: console.print(event_line(e)), **kwargs)
    console.print(outcome_line(stack, outputs.outcome, time.monotonic() - started))
    return outputs


def outcome_line(stack: str, outcome: DeployOutcome, seconds: float) -> Text:
    """``Stack app created (41.2s)``, ``... updated (...)`` or ``... unchanged (no changes)``."""
    said = (
        "unchanged (no changes)"
        if outcome is DeployOutcome.UNCHANGED
        else f"{outcome.value} ({seconds:.1f}s)"
    )
    return Text.assemble("Stack ", literal(stack, "bold"), f" {said}\n")


def event_line(event: StackEvent) -> Text:
    """``09:30:01 JobTable  AWS::DynamoDB::Table  CREATE_COMPLETE  reason``, aligned."""
    style = "red" if event.failed else "green" if event.status.endswith("_COMPLETE") else "yellow"
    resource, kind, status = EVENT_COLUMNS
    line = Text(f"{event.timestamp:%H:%M:%S} ", style="dim")
    line.append(f"{event.logical_id:<{resource}} {event.resource_type:<{kind}} ")
    line.append(f"{event.status:<{status}} ", style=style)
    if event.reason:
        line.append(escape_controls(event.reason), style="dim")
    return line
