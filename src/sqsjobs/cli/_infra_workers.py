"""``sqsjobs infra deploy --ecs-worker | --lambda-worker``: the job stack, then its workers,
in one command (``infra._workers`` decides the worker stack's name and parameters).

The options are checked before anything is sent: a worker parameter the template does
not know, one the job stack's outputs fill, or a required one left out is bad usage
(exit 2). A dry run previews the job stack and, when it exists already, the worker
stack too (its parameters are the job stack's outputs, unknown before it exists).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.text import Text

from ..infra import (
    StackDeployError,
    StackOutputsMissing,
    WorkerSetupError,
    WorkerStack,
    current_outputs,
    preview_stack,
    worker_stack,
)
from ._config import AwsConfig
from ._errors import CommandFailed, usage_error
from ._preview import preview_view
from ._render import mapping_table

F = TypeVar("F", bound=Callable[..., Any])


def worker_options(parse: Callable[..., dict[str, str]]) -> Callable[[F], F]:
    """``--ecs-worker``, ``--lambda-worker`` and ``-w KEY=VALUE`` (parsed by ``parse``)."""

    def decorate(command: F) -> F:
        for option in reversed(
            [
                click.option(
                    "--ecs-worker",
                    is_flag=True,
                    help="Then deploy ECS (Fargate) workers for the queue: stack "
                    "NAME-ecs-worker (template sqsjobs-ecs-worker), scaling on backlog. "
                    "Give -w Image=... -w Registry=app.jobs:registry -w Subnets=a,b "
                    "-w SecurityGroups=sg (docs/how-to/workers-ecs.md).",
                ),
                click.option(
                    "--lambda-worker",
                    is_flag=True,
                    help="Then deploy a Lambda worker for the queue: stack NAME-lambda-worker "
                    "(template sqsjobs-lambda-worker), its code the zip of `sqsjobs infra "
                    "package` in S3 (-w CodeS3Bucket=... -w CodeS3Key=...) or -w ImageUri=...; "
                    "the queue's VisibilityTimeout becomes 6 x its Timeout "
                    "(docs/how-to/workers-lambda.md).",
                ),
                click.option(
                    "--worker",
                    "-w",
                    "worker_parameters",
                    multiple=True,
                    metavar="KEY=VALUE",
                    callback=parse,
                    help="A parameter of the worker stack's template; repeat for more. The "
                    "table, queue and policies come from the job stack's outputs.",
                ),
            ]
        ):
            command = option(command)
        return command

    return decorate


def chosen_worker(
    stack: str,
    template: str,
    kinds: dict[str, bool],
    given: dict[str, str],
) -> WorkerStack | None:
    """The worker stack asked for (``kinds``: the flags by kind), checked; bad usage if not."""
    asked = [kind for kind, on in kinds.items() if on]
    if len(asked) > 1:
        raise usage_error("Choose one of --ecs-worker and --lambda-worker")
    if not asked:
        if given:
            raise usage_error(
                "-w gives a worker stack's parameters: add --ecs-worker or --lambda-worker"
            )
        return None
    try:
        return worker_stack(asked[0], stack, template, given)
    except WorkerSetupError as error:
        raise usage_error(str(error)) from error


def preview_worker(
    console: Console, worker: WorkerStack, tags: dict[str, str], aws: AwsConfig
) -> None:
    """The worker stack's dry run, once the job stack exists to fill its parameters."""
    arguments = aws.operator_arguments()
    outputs = current_outputs(worker.job_stack, **arguments)
    if outputs is None:
        console.print(
            Text(
                f"Stack {worker.stack} (template {worker.template}) is planned once stack "
                f"{worker.job_stack} exists: its parameters are that stack's outputs."
            )
        )
        return
    try:
        preview = preview_stack(
            worker.stack,
            template=worker.template,
            parameters=worker.parameters(outputs),
            tags=tags,
            **arguments,
        )
    except StackDeployError as error:
        raise CommandFailed(str(error)) from error
    console.print(preview_view(preview, worker.template))


def deploy_worker(
    console: Console,
    worker: WorkerStack,
    outputs: dict[str, str],
    tags: dict[str, str],
    aws: AwsConfig,
    deploy: Callable[..., dict[str, str]],
) -> None:
    """Deploy the worker stack from the job stack's ``outputs`` with ``deploy`` (the
    command's progress-reporting deploy) and print its outputs."""
    try:
        deployed = deploy(
            console,
            worker.stack,
            template=worker.template,
            parameters=worker.parameters(outputs),
            tags=tags,
            **aws.operator_arguments(),
        )
    except StackOutputsMissing as error:
        raise CommandFailed(str(error)) from error
    console.print(mapping_table(f"Outputs of stack {worker.stack}", "output", "value", deployed))
