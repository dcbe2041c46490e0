"""Where a command finds its jobs: the one place that turns options into an ``SqsJobStore``.

A store comes from a deployed stack (``--stack``, or ``SQSJOBS_STACK``) through
``SqsJobStore.from_stack``, or else from the environment (``SQSJOBS_TABLE``,
``SQSJOBS_QUEUES="default=URL,..."``) through ``SqsJobStore.from_env``: the same
variables a Lambda function or an ECS task gets, so an operator's shell and a worker
read one configuration. Credentials, region and endpoint follow boto3's chain
(``AWS_PROFILE``, ``AWS_REGION``, ``AWS_ENDPOINT_URL``...); ``--endpoint-url`` and
``--region`` override it, e.g. to reach a local emulator.

Every command that needs a store takes ``@store_options`` and receives one
``StoreConfig``; none of them reads the environment itself.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ._errors import usage_error

if TYPE_CHECKING:
    from ..aws import SqsJobStore

F = TypeVar("F", bound=Callable[..., Any])

STACK_ENV = "SQSJOBS_STACK"
TABLE_ENV = "SQSJOBS_TABLE"
QUEUES_ENV = "SQSJOBS_QUEUES"
DEFAULT_QUEUE = "default"


@dataclass(frozen=True)
class AwsConfig:
    """Overrides of boto3's endpoint and region; ``None`` keeps boto3's own choice."""

    endpoint_url: str | None = None
    region_name: str | None = None

    def arguments(self) -> dict[str, str]:
        """Keyword arguments for ``SqsJobStore`` or ``deploy_stack``: only those given."""
        given = {"endpoint_url": self.endpoint_url, "region_name": self.region_name}
        return {key: value for key, value in given.items() if value}


@dataclass(frozen=True)
class StoreConfig:
    """How to reach the jobs: a stack name, or ``None`` for the environment."""

    stack: str | None = None
    aws: AwsConfig = AwsConfig()

    def open(self, **kwargs: Any) -> SqsJobStore:
        """The store (``kwargs`` go to its constructor, e.g. ``wait_time``).

        Raises:
            click.UsageError: neither a stack nor the environment names the jobs, or what
                names them is malformed (the stack lacks outputs, a bad ``SQSJOBS_QUEUES``).
        """
        from ..aws import SqsJobStore

        arguments = {**self.aws.arguments(), **kwargs}
        try:
            if self.stack:
                return SqsJobStore.from_stack(self.stack, **arguments)
            if not (os.environ.get(TABLE_ENV) and os.environ.get(QUEUES_ENV)):
                raise usage_error(
                    f"No job store configured: pass --stack NAME (or set {STACK_ENV}), "
                    f"or set {TABLE_ENV} and {QUEUES_ENV}='default=URL,...'"
                )
            return SqsJobStore.from_env(**arguments)
        except ValueError as error:
            raise usage_error(str(error)) from error


def default_queue(store: SqsJobStore) -> str:
    """``default`` if the store has it, else its first queue: a stack has one queue."""
    names = list(store.queue_urls)
    return DEFAULT_QUEUE if DEFAULT_QUEUE in names else names[0]


def aws_options(command: F) -> F:
    """Add ``--endpoint-url`` and ``--region``, passed on as one ``aws: AwsConfig``."""

    @functools.wraps(command)
    def wrapper(*args: Any, endpoint_url: str | None, region: str | None, **kwargs: Any) -> Any:
        return command(*args, aws=AwsConfig(endpoint_url, region), **kwargs)

    wrapper = click.option(
        "--region", metavar="REGION", help="AWS region (default: from AWS_REGION or the profile)."
    )(wrapper)
    wrapper = click.option(
        "--endpoint-url",
        metavar="URL",
        help="AWS endpoint, e.g. a local emulator (default: AWS_ENDPOINT_URL, else AWS).",
    )(wrapper)
    return wrapper  # type: ignore[return-value]


def store_options(command: F) -> F:
    """Add ``--stack`` and the AWS options, passed on as one ``store: StoreConfig``."""

    @functools.wraps(command)
    def wrapper(*args: Any, stack: str | None, aws: AwsConfig, **kwargs: Any) -> Any:
        return command(*args, store=StoreConfig(stack, aws), **kwargs)

    wrapper = aws_options(wrapper)
    wrapper = click.option(
        "--stack",
        envvar=STACK_ENV,
        metavar="NAME",
        help=f"CloudFormation stack deployed from infra/ (or {STACK_ENV}); "
        f"without it, {TABLE_ENV} and {QUEUES_ENV} name the table and queues.",
    )(wrapper)
    return wrapper  # type: ignore[return-value]
