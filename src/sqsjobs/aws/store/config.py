"""Store configuration: ``StoreSettings``, where each setting of ``SqsJobStore`` is declared.

Each field of ``StoreSettings`` carries its default, its docstring and its check (run
whenever a value is built, ``dataclasses.replace`` included). Those that say where the
jobs live also say where ``from_env`` and ``from_stack`` read them (``Source``), so the
environment mapping and the stack outputs are read by iterating the fields, and the
keyword arguments of ``SqsJobStore`` are the fields themselves.

Both ``SQSJOBS_QUEUES`` and the stack output ``QueueUrls`` use one format,
``"default=URL,high=URL"``, so a stack's outputs can be copied into a Lambda's
environment as they are. Explicit keyword arguments always win over what is read.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple, TypeVar

from ...core.validation import Span, seconds
from ..transports.endpoint import Endpoint
from ..wire.index_keys import DEFAULT_SHARDS
from ..wire.items import RECORD_FORMAT
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Call, Send, public_error
from .checks import (
    checked_dead_letters,
    checked_format,
    checked_lanes,
    checked_queues,
    checked_shards,
    checked_table,
    parse_format,
    parse_lanes,
    parse_shards,
    parse_text,
    parse_urls,
    refuse_dead_letter_queues,
)

__all__ = [
    "Endpoint",
    "StoreSettings",
    "env_arguments",
    "parse_lanes",
    "parse_urls",
    "stack_arguments",
]

TABLE_ENV = "SQSJOBS_TABLE"
QUEUES_ENV = "SQSJOBS_QUEUES"
DEAD_LETTER_ENV = "SQSJOBS_DEAD_LETTER_QUEUES"
LANES_ENV = "SQSJOBS_PRIORITY_LANES"
SHARDS_ENV = "SQSJOBS_INDEX_SHARDS"
FORMAT_ENV = "SQSJOBS_RECORD_FORMAT"
LEAN_ENV = "SQSJOBS_LEAN"
T = TypeVar("T")

WAIT_TIME = Span(maximum=20.0, why="SQS's longest poll")
CLOCK_SKEW = Span(maximum=300.0, why="clocks further apart need fixing, not a margin")
# Dead records outlive the longest DLQ retention SQS allows (14 days), so a redrive of
# any message still in a DLQ finds its record.
DEAD_RETENTION = 14 * 86_400.0

# A setting's check: (value, the setting's name) -> the value kept; raises ValueError.
Check = Callable[[Any, str], Any]


class Source(NamedTuple):
    """Where ``from_env`` and ``from_stack`` read a setting, as text, and how it parses."""

    env: str  # the environment variable (``from_env``; empty counts as unset)
    output: str  # the CloudFormation output (``from_stack``)
    parse: Callable[[str, str], Any]  # (text, where it was read) -> the value
    # What a stack without the output means (templates before it); None: the setting
    # is left out, as it is when the output is empty.
    absent: str | None = None


def _about(check: Check | None = None, source: Source | None = None) -> dict[str, Any]:
    """A field's metadata: its check, and where the environment or a stack gives it."""
    return {"check": check, "source": source}


def _seconds(span: Span | None = None) -> Check:
    return partial(seconds, code=None) if span is None else partial(seconds, span=span, code=None)


@dataclass(frozen=True, kw_only=True)
class StoreSettings:
    """Everything an ``SqsJobStore`` is configured with: one value, checked when built.

    ``SqsJobStore(settings=StoreSettings(...))`` takes it; ``SqsJobStore(**fields)`` is
    the shortcut that builds one, and ``from_env``, ``from_stack`` and ``create`` build
    one from what they read. ``dataclasses.replace(settings, wait_time=5.0)`` is a
    changed copy, checked again. A bad value raises ``ValueError`` naming the setting
    (``JobConfigError``, a ``ValueError``, for a bad queue name). The mappings are
    copies of the caller's.
    """

    # -- where the jobs live ------------------------------------------------------------
    table_name: str = field(
        metadata=_about(checked_table, Source(TABLE_ENV, "TableName", parse_text))
    )
    """The DynamoDB table of the job records."""
    queue_urls: Mapping[str, str] = field(
        metadata=_about(checked_queues, Source(QUEUES_ENV, "QueueUrls", parse_urls))
    )
    """Each queue's SQS URL, ``{"default": URL}``: at least one."""
    dead_letter_queue_urls: Mapping[str, str] | None = field(
        default=None,
        metadata=_about(
            checked_dead_letters, Source(DEAD_LETTER_ENV, "DeadLetterQueueUrls", parse_urls)
        ),
    )
    """Each queue's DLQ; left out, read from the queue's redrive policy on first need."""
    priority_lanes: Mapping[str, Mapping[int, str]] | None = field(
        default=None, metadata=_about(None, Source(LANES_ENV, "PriorityLaneUrls", parse_lanes))
    )
    """Per queue, ``{lowest priority: URL}``: a queue of its own per band (not FIFO);
    checked against the queues (``checks.checked_lanes``) once they are."""
    index_shards: int = field(
        default=DEFAULT_SHARDS,
        metadata=_about(
            checked_shards,
            Source(SHARDS_ENV, "IndexShards", parse_shards, absent=str(DEFAULT_SHARDS)),
        ),
    )
    """List-index partitions per status, 1 to 256; may only grow (docs/explanation/scaling.md)."""

    # -- how long records are kept ------------------------------------------------------
    retention: float = field(default=86_400.0, metadata=_about(_seconds()))
    """Seconds a completed or cancelled job's record is kept (its TTL), and its key."""
    dead_retention: float = field(default=DEAD_RETENTION, metadata=_about(_seconds()))
    """Seconds a dead job's record is kept: at least as long as its DLQ keeps the message,
    so that a redrive finds the record."""

    # -- behaviour ----------------------------------------------------------------------
    wait_time: float = field(default=20.0, metadata=_about(_seconds(WAIT_TIME)))
    """The longest long poll of a claim, up to 20 seconds."""
    resend_after: float = field(default=60.0, metadata=_about(_seconds()))
    """A duplicate enqueue re-sends the message of a job this many seconds overdue."""
    clock_skew: float = field(default=2.0, metadata=_about(_seconds(CLOCK_SKEW)))
    """Seconds after a lease ended before another worker takes the job over."""
    record_format: int = field(
        default=RECORD_FORMAT,
        metadata=_about(
            checked_format, Source(FORMAT_ENV, "RecordFormat", parse_format, absent="1")
        ),
    )
    """The format new records are written in: one every reader of the deployment reads."""
    clock: Callable[[], float] = time.time
    """The store's clock, in epoch seconds (its claims, the operator calls)."""

    # -- the client policy (``transports.endpoint``) -------------------------------------
    endpoint_url: str | None = None
    """Overrides boto3's endpoint chain for both services."""
    region_name: str | None = None
    """Overrides boto3's region chain."""
    connect_timeout: float | None = None
    """Seconds to connect; left out, botocore's 60."""
    max_attempts: int | None = None
    """Tries per call, the first included (1 to 10); left out, five."""
    lean: bool | None = None
    """The worker's hot calls past the SDK's per-call pipeline; left out, ``SQSJOBS_LEAN``."""
    session: Any = None
    """The caller's ``boto3.Session``: its credentials and event handlers."""
    aio_session: Any = None
    """The caller's aiobotocore ``AioSession`` or ``aioboto3.Session``."""
    config: Any = None
    """The caller's botocore ``Config``, merged over the store's."""

    def __post_init__(self) -> None:
        for setting in dataclasses.fields(self):
            check = setting.metadata.get("check")
            if check is not None:
                kept = check(getattr(self, setting.name), setting.name)
                object.__setattr__(self, setting.name, kept)
        # What one setting cannot check alone, once each is checked:
        dead = (self.dead_letter_queue_urls or {}).values()
        refuse_dead_letter_queues(self.queue_urls, dead)
        if self.priority_lanes is not None:
            checked_lanes(self.priority_lanes or {}, self.queue_urls, dead)
            lanes = {queue: dict(bands) for queue, bands in (self.priority_lanes or {}).items()}
            object.__setattr__(self, "priority_lanes", lanes)
        _client(self, False if self.lean is None else self.lean)


def given_settings(settings: object, keywords: Mapping[str, Any]) -> StoreSettings:
    """``SqsJobStore``'s settings: ``settings`` as given, or the one its keywords build."""
    if settings is None:
        return StoreSettings(**keywords)
    if keywords:
        raise TypeError(
            "SqsJobStore() takes settings= or the keywords of one, not both; got "
            f"{', '.join(sorted(keywords))} too (dataclasses.replace changes a setting)"
        )
    if not isinstance(settings, StoreSettings):
        raise ValueError(f"settings must be a StoreSettings, got {type(settings).__name__}")
    return settings


SETTINGS = tuple(dataclasses.fields(StoreSettings))
REQUIRED = tuple(s.name for s in SETTINGS if s.default is dataclasses.MISSING)
SOURCES: dict[str, Source] = {
    s.name: s.metadata["source"] for s in SETTINGS if s.metadata.get("source") is not None
}
# The CloudFormation outputs from_stack needs; the others are optional.
STACK_OUTPUTS = tuple(SOURCES[name].output for name in REQUIRED)


def layout_of(settings: StoreSettings) -> Layout:
    """Where the jobs live, as the flows read it (no queue described yet)."""
    urls = dict(settings.queue_urls)
    dead = dict(settings.dead_letter_queue_urls or {})
    return Layout(
        settings.table_name,
        urls,
        dead,
        {},
        retention=settings.retention,
        dead_retention=settings.dead_retention,
        clock_skew=settings.clock_skew,
        resend_after=settings.resend_after,
        lanes=checked_lanes(settings.priority_lanes or {}, urls, dead.values()),
        index_shards=settings.index_shards,
        record_format=settings.record_format,
    )


def endpoint_of(settings: StoreSettings) -> Endpoint:
    """The client policy; ``lean`` left out is read from ``SQSJOBS_LEAN`` now."""
    return _client(settings, lean_setting(settings.lean))


def _client(settings: StoreSettings, lean: bool) -> Endpoint:
    given = {name: getattr(settings, name) for name in Endpoint._fields}
    return Endpoint.checked(**{**given, "lean": lean})


def lean_setting(value: bool | None) -> bool:
    """``lean`` as given, else ``SQSJOBS_LEAN`` (``1``/``true`` or ``0``/``false``), else off."""
    if value is not None:
        return value
    text = os.environ.get(LEAN_ENV, "").strip().lower()
    if text in ("", "0", "false", "no", "off"):
        return False
    if text in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{LEAN_ENV} must be 1 or 0 (true or false), got {text!r}")


def env_arguments() -> dict[str, Any]:
    """The settings the environment gives (each ``Source.env`` that is set), parsed."""
    texts = {name: os.environ.get(source.env, "") for name, source in SOURCES.items()}
    if not all(texts[name] for name in REQUIRED):
        needed = " and ".join(SOURCES[name].env for name in REQUIRED)
        raise ValueError(
            f"SqsJobStore.from_env() needs {needed} "
            f"(e.g. {QUEUES_ENV}='default=https://sqs.../jobs')"
        )
    return {
        name: SOURCES[name].parse(text, SOURCES[name].env) for name, text in texts.items() if text
    }


def before_the_store(arguments: Mapping[str, Any], work: Callable[[Send], T]) -> T:
    """``work`` over a blocking transport of its own to the endpoint (and SDK objects) a
    store's keyword ``arguments`` name, for what runs before the store exists (reading a
    stack, making its resources); an AWS failure surfaces as ``JobStoreError``."""
    from ..transports.boto import BotoTransport

    transport = BotoTransport(Endpoint.of(arguments))
    try:
        return work(transport)
    except AwsError as error:
        raise public_error(error) from error.cause
    finally:
        transport.close()


def arguments_of_stack(stack_name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``stack_arguments``, read through the endpoint (and SDK objects) of ``arguments``."""
    return before_the_store(arguments, lambda send: stack_arguments(stack_name, send))


def stack_arguments(stack_name: str, send: Send) -> dict[str, Any]:
    """Store arguments from one stack, or several ("app,app-reports") sharing one table.

    A stack from ``sqsjobs-queue.yaml`` adds a queue to the table of a ``sqsjobs.yaml``
    stack; naming both gives one store that serves every queue.
    """
    arguments: dict[str, Any] = {}
    agreed: tuple[str, int] | None = None
    for name in [n.strip() for n in stack_name.split(",") if n.strip()]:
        found = _settings_in(_stack_outputs(name, send))
        table = arguments.setdefault("table_name", found["table_name"])
        if table != found["table_name"]:
            raise ValueError(
                f"Stacks {stack_name!r} name different tables ({table!r} and "
                f"{found['table_name']!r}); one store serves one table"
            )
        for urls in ("queue_urls", "dead_letter_queue_urls", "priority_lanes"):
            arguments.setdefault(urls, {}).update(found.get(urls, {}))
        agreed = _agree_on_shards(agreed, name, found["index_shards"])
        arguments["index_shards"] = found["index_shards"]
        # Stacks sharing a table: the oldest readers any of them may still run decide.
        found_format = found["record_format"]
        arguments["record_format"] = min(found_format, arguments.get("record_format", found_format))
    if "table_name" not in arguments:
        raise ValueError(f"No stack named in {stack_name!r}")
    for optional in ("dead_letter_queue_urls", "priority_lanes"):
        if not arguments[optional]:
            del arguments[optional]
    return arguments


def _settings_in(outputs: Mapping[str, str]) -> dict[str, Any]:
    """The settings one stack's outputs give, parsed (each ``Source.output``).

    An output a stack lacks reads as its ``absent`` text; an optional one without such a
    text is left out when missing or empty.
    """
    found: dict[str, Any] = {}
    for name, source in SOURCES.items():
        text = outputs.get(source.output, source.absent)
        if text is None or not (text or source.absent or name in REQUIRED):
            continue
        found[name] = source.parse(text, source.output)
    return found


def _agree_on_shards(agreed: tuple[str, int] | None, name: str, shards: int) -> tuple[str, int]:
    """Every stack on one table must list it with one shard count: a store reading fewer
    shards than another writes would miss that one's jobs in listings and stats."""
    if agreed is not None and agreed[1] != shards:
        raise ValueError(
            f"Stacks {agreed[0]!r} and {name!r} share one table but give IndexShards "
            f"{agreed[1]} and {shards}; deploy both with the same IndexShards (it may only "
            "grow: docs/explanation/scaling.md)"
        )
    return agreed or (name, shards)


def _stack_outputs(stack_name: str, send: Send) -> dict[str, str]:
    reply = send(Call("cloudformation", "describe_stacks", {"StackName": stack_name}))
    outputs = {o["OutputKey"]: o["OutputValue"] for o in reply["Stacks"][0].get("Outputs", [])}
    missing = sorted(set(STACK_OUTPUTS) - set(outputs))
    if missing:
        raise ValueError(f"Stack {stack_name!r} has no output(s) {', '.join(missing)}")
    return outputs
