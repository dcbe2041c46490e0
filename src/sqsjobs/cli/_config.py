"""Where a command finds its jobs: the one place that turns options into an ``SqsJobStore``.

A store comes from a deployed stack (``--stack``, or ``SQSJOBS_STACK``) through
``SqsJobStore.from_stack``, or else from the environment (``SQSJOBS_TABLE``,
``SQSJOBS_QUEUES="default=URL,..."``) through ``SqsJobStore.from_env``: the same
variables a Lambda function or an ECS task gets, so an operator's shell and a worker
read one configuration. Credentials, region and endpoint follow boto3's chain
(``AWS_PROFILE``, ``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL``...); ``--endpoint-url`` and
``--region`` override it, e.g. to reach a local emulator. ``--region`` also reads
``AWS_REGION``, as the AWS CLI does (botocore itself reads only ``AWS_DEFAULT_REGION``).

Operator commands are impatient: ``OPERATOR_CLIENT`` (a 2-second connect timeout, two
attempts per call) reports an unreachable endpoint within seconds instead of retrying
for a minute. Only the worker opens its store ``patient``, with botocore's defaults, so
a network blip does not stop it.

Every command that needs a store takes ``@store_options`` and receives one
``StoreConfig``; none of them reads the environment itself.

``--region`` and ``--endpoint-url`` are checked by botocore's own rules as they are
parsed: botocore applies them only when the first call is made, and its refusal
(``InvalidRegionError``, ``ValueError: Invalid endpoint``) would then be a failure (exit 1)
that names neither option. A ``--stack`` that is not UTF-8 text (a byte the shell passed
through undecoded) is refused the same way.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click
from botocore.exceptions import InvalidRegionError  # type: ignore[import-untyped]
from botocore.utils import (  # type: ignore[import-untyped]
    is_valid_endpoint_url,
    is_valid_ipv6_endpoint_url,
    validate_region_name,
)

from ._errors import usage_error

if TYPE_CHECKING:
    from ..aws import SqsJobStore

F = TypeVar("F", bound=Callable[..., Any])

STACK_ENV = "SQSJOBS_STACK"
TABLE_ENV = "SQSJOBS_TABLE"
QUEUES_ENV = "SQSJOBS_QUEUES"
DEFAULT_QUEUE = "default"
REGION_ENV = "AWS_REGION"
OPERATOR_CLIENT = {"connect_timeout": 2.0, "max_attempts": 2}
TARGET = "sqsjobs.target"  # click context meta: what the command reached for, for errors


@dataclass(frozen=True)
class AwsConfig:
    """Overrides of boto3's endpoint and region; ``None`` keeps boto3's own choice."""

    endpoint_url: str | None = None
    region_name: str | None = None

    def arguments(self) -> dict[str, str]:
        """Keyword arguments for ``SqsJobStore`` or ``deploy_stack``: only those given."""
        given = {"endpoint_url": self.endpoint_url, "region_name": self.region_name}
        return {key: value for key, value in given.items() if value}

    def operator_arguments(self) -> dict[str, Any]:
        """``arguments`` with the impatient client policy of an operator's command."""
        return {**self.arguments(), **OPERATOR_CLIENT}


@dataclass(frozen=True)
class StoreConfig:
    """How to reach the jobs: a stack name, or ``None`` for the environment."""

    stack: str | None = None
    aws: AwsConfig = AwsConfig()

    def open(self, *, patient: bool = False, **kwargs: Any) -> SqsJobStore:
        """The store (``kwargs`` go to its constructor, e.g. ``wait_time``); ``patient``
        keeps botocore's timeouts and retries (a worker), else ``OPERATOR_CLIENT``.

        Raises:
            click.UsageError: neither a stack nor the environment names the jobs, or what
                names them is malformed (the stack lacks outputs, a bad ``SQSJOBS_QUEUES``).
        """
        from ..aws import SqsJobStore

        policy = self.aws.arguments() if patient else self.aws.operator_arguments()
        arguments = {**policy, **kwargs}
        target = remember(stack=self.stack, endpoint_url=self.aws.endpoint_url)
        try:
            if self.stack:
                store = SqsJobStore.from_stack(self.stack, **arguments)
            elif os.environ.get(TABLE_ENV) and os.environ.get(QUEUES_ENV):
                store = SqsJobStore.from_env(**arguments)
            else:
                raise usage_error(
                    f"No job store configured: pass --stack NAME (or set {STACK_ENV}), "
                    f"or set {TABLE_ENV} and {QUEUES_ENV}='default=URL,...'"
                )
        except ValueError as error:
            raise usage_error(str(error)) from error
        target["table"] = store.table_name
        target["queues"] = ", ".join(f"{q}={url}" for q, url in store.queue_urls.items())
        return store


def remember(**facts: str | None) -> dict[str, str]:
    """Note what this command is about to reach (in its click context), so that a failure
    can name it: the stack, the table, the endpoint (see ``aws.explain.explained``)."""
    ctx = click.get_current_context(silent=True)
    target: dict[str, str] = {} if ctx is None else ctx.meta.setdefault(TARGET, {})
    target.update({key: value for key, value in facts.items() if value})
    return target


def default_queue(store: SqsJobStore) -> str:
    """``default`` if the store has it, else its first queue: a stack has one queue."""
    names = list(store.queue_urls)
    return DEFAULT_QUEUE if DEFAULT_QUEUE in names else names[0]


def _region(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if not value:
        return value
    try:
        validate_region_name(value)
    except InvalidRegionError:
        raise click.BadParameter(
            f"{value!r} is not an AWS region name: letters, digits and hyphens, "
            "e.g. us-east-1 or eu-central-1",
            ctx,
            param,
        ) from None
    return value


def _endpoint(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if not value:
        return value
    try:
        valid = is_valid_endpoint_url(value) or is_valid_ipv6_endpoint_url(value)
    except ValueError:  # a malformed IPv6 host, or one that IDNA cannot encode
        valid = False
    if not valid:
        raise click.BadParameter(
            f"{value!r} is not an endpoint URL: a scheme and a host name, "
            "e.g. http://localhost:4566 or https://sqs.eu-west-1.amazonaws.com",
            ctx,
            param,
        )
    return value


def _stack(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    text = value or ""
    try:
        text.encode()
    except UnicodeEncodeError as error:
        raise click.BadParameter(
            f"{text!r} is not a stack name: {text[error.start]!r} is not UTF-8 text",
            ctx,
            param,
        ) from None
    return value


def aws_options(command: F) -> F:
    """Add ``--endpoint-url`` and ``--region``, passed on as one ``aws: AwsConfig``."""

    @functools.wraps(command)
    def wrapper(*args: Any, endpoint_url: str | None, region: str | None, **kwargs: Any) -> Any:
        return command(*args, aws=AwsConfig(endpoint_url, region), **kwargs)

    wrapper = click.option(
        "--region",
        envvar=REGION_ENV,
        metavar="REGION",
        callback=_region,
        help=f"AWS region (or {REGION_ENV}; default: AWS_DEFAULT_REGION, else the profile's).",
    )(wrapper)
    wrapper = click.option(
        "--endpoint-url",
        metavar="URL",
        callback=_endpoint,
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
        callback=_stack,
        help=f"CloudFormation stack deployed from infra/ (or {STACK_ENV}); "
        f"without it, {TABLE_ENV} and {QUEUES_ENV} name the table and queues.",
    )(wrapper)
    return wrapper  # type: ignore[return-value]
