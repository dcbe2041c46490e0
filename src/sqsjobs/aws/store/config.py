"""Store configuration: constructor checks, and reading it from the environment or a stack.

Both ``SQSJOBS_QUEUES`` and the stack output ``QueueUrls`` use one format,
``"default=URL,high=URL"``, so a stack's outputs can be copied into a Lambda's
environment as they are. Explicit keyword arguments always win over what is read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, TypeVar

from ...core.validation import Span, check_queue_name, integer, seconds
from ..transports.endpoint import Endpoint
from ..wire.index_keys import DEFAULT_SHARDS, MAX_SHARDS
from ..wire.items import RECORD_FORMAT, RECORD_FORMATS
from ..wire.layout import Lanes, Layout
from ..wire.protocol import AwsError, Call, Send, public_error

__all__ = ["Endpoint", "StoreSettings", "env_arguments", "parse_urls", "stack_arguments"]

TABLE_ENV = "SQSJOBS_TABLE"
QUEUES_ENV = "SQSJOBS_QUEUES"
DEAD_LETTER_ENV = "SQSJOBS_DEAD_LETTER_QUEUES"
LANES_ENV = "SQSJOBS_PRIORITY_LANES"
SHARDS_ENV = "SQSJOBS_INDEX_SHARDS"
FORMAT_ENV = "SQSJOBS_RECORD_FORMAT"
LEAN_ENV = "SQSJOBS_LEAN"
T = TypeVar("T")
# CloudFormation outputs that from_stack reads; DeadLetterQueueUrls, PriorityLaneUrls and
# IndexShards are optional.
STACK_OUTPUTS = ("TableName", "QueueUrls")
LANES_OUTPUT = "PriorityLaneUrls"
SHARDS_OUTPUT = "IndexShards"  # absent from stacks made before it: DEFAULT_SHARDS
# Absent from stacks deployed by 0.1 releases, whose readers need record format 1.
FORMAT_OUTPUT = "RecordFormat"
LANES_FORMAT = "'default@1=URL,reports@1=URL' (queue@lowest priority=URL)"


WAIT_TIME = Span(maximum=20.0, why="SQS's longest poll")
CLOCK_SKEW = Span(maximum=300.0, why="clocks further apart need fixing, not a margin")


class StoreSettings(NamedTuple):
    endpoint: Endpoint
    layout: Layout
    wait_time: float

    @classmethod
    def build(
        cls,
        *,
        table_name: str,
        queue_urls: Mapping[str, str],
        dead_letter_queue_urls: Mapping[str, str] | None,
        endpoint_url: str | None,
        region_name: str | None,
        retention: float,
        dead_retention: float,
        wait_time: float,
        resend_after: float,
        clock_skew: float,
        priority_lanes: Mapping[str, Mapping[int, str]] | None = None,
        index_shards: int = DEFAULT_SHARDS,
        connect_timeout: float | None = None,
        max_attempts: int | None = None,
        record_format: int = RECORD_FORMAT,
        lean: bool | None = None,
        session: Any = None,
        aio_session: Any = None,
        config: Any = None,
    ) -> StoreSettings:
        if not isinstance(table_name, str) or not table_name:
            raise ValueError(f"table_name must be a non-empty str, got {table_name!r}")
        urls = _urls(queue_urls, "queue_urls")
        if not urls:
            raise ValueError("queue_urls must name at least one queue: {'default': URL}")
        dead = _urls(dead_letter_queue_urls or {}, "dead_letter_queue_urls")
        refuse_dead_letter_queues(urls, dead.values())
        lanes = checked_lanes(priority_lanes or {}, urls, dead.values())
        layout = Layout(
            table_name,
            urls,
            dead,
            {},
            retention=seconds(retention, "retention", code=None),
            dead_retention=seconds(dead_retention, "dead_retention", code=None),
            clock_skew=seconds(clock_skew, "clock_skew", CLOCK_SKEW, code=None),
            resend_after=seconds(resend_after, "resend_after", code=None),
            lanes=lanes,
            index_shards=checked_shards(index_shards),
            record_format=checked_format(record_format),
        )
        wait = seconds(wait_time, "wait_time", WAIT_TIME, code=None)
        endpoint = Endpoint.checked(
            endpoint_url,
            region_name,
            connect_timeout,
            max_attempts,
            lean_setting(lean),
            session,
            aio_session,
            config,
        )
        return cls(endpoint, layout, wait)


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


def checked_shards(value: object) -> int:
    """The list index's partitions per status: at least one, and few enough that a stats
    call (4 x shards queries per queue) stays cheap; more throughput means more tables."""
    return integer(
        value,
        "index_shards",
        minimum=1,
        maximum=MAX_SHARDS,
        why="a stats call makes 4 x index_shards queries per queue; see docs/scaling.md",
        code=None,
    )


def checked_format(value: object) -> int:
    """The record format new jobs are written in: one every reader of the deployment reads.

    1 while any producer, worker, Lambda function or reconciler of a 0.1 release still
    runs beside this one; 2 while one of 0.2 does; 3 once all of them run 0.3 or later
    (CHANGELOG.md, "Upgrading").
    """
    if isinstance(value, bool) or value not in RECORD_FORMATS:
        allowed = ", ".join(str(f) for f in RECORD_FORMATS[:-1]) + f" or {RECORD_FORMATS[-1]}"
        raise ValueError(
            f"record_format must be {allowed}, got {value!r}: 1 while readers of sqsjobs "
            "0.1 still run (a rolling upgrade), 2 while readers of 0.2 do, 3 once every "
            "reader runs 0.3 or later"
        )
    return int(value)


def parse_format(text: str, what: str) -> int:
    """A record format read as text (an environment variable or a stack output)."""
    return checked_format(int(text) if text.strip().isdigit() else text)


def parse_shards(text: str, what: str) -> int:
    """A shard count read as text (an environment variable or a stack output)."""
    if not (text.strip().isascii() and text.strip().isdigit()):
        raise ValueError(f"{what} must be a whole number from 1 to {MAX_SHARDS}, got {text!r}")
    return checked_shards(int(text))


def refuse_dead_letter_queues(
    queue_urls: Mapping[str, str], dead_letter_urls: Iterable[str]
) -> None:
    """A work queue that is some queue's DLQ would run every dead job again: refuse it."""
    dead = set(dead_letter_urls)
    for queue, url in sorted(queue_urls.items()):
        if url in dead:
            raise ValueError(
                f"queue_urls[{queue!r}] = {url!r} is a dead-letter queue of this store; "
                "work queues and their dead-letter queues must be distinct queues"
            )


def checked_lanes(
    value: Mapping[str, Mapping[int, str]],
    queue_urls: Mapping[str, str],
    dead_letter_urls: Iterable[str],
) -> dict[str, Lanes]:
    """Each queue's lanes, highest band first; a lane must be a queue of its own."""
    if not isinstance(value, Mapping):
        raise ValueError("priority_lanes must map a queue name to {lowest priority: URL}")
    taken = {*queue_urls.values(), *dead_letter_urls}
    lanes: dict[str, Lanes] = {}
    for queue, bands in value.items():
        if queue not in queue_urls:
            known = ", ".join(sorted(queue_urls))
            raise ValueError(f"priority_lanes names queue {queue!r}, not one of {known}")
        if queue_urls[queue].endswith(".fifo"):
            raise ValueError(
                f"Queue {queue!r} is a FIFO queue: its order is its groups', it takes no "
                "priority lanes"
            )
        if not isinstance(bands, Mapping) or not bands:
            raise ValueError(f"priority_lanes[{queue!r}] must map lowest priorities to URLs")
        for lowest, url in bands.items():
            integer(lowest, f"priority_lanes[{queue!r}] lowest priority", minimum=1, code=None)
            if not isinstance(url, str) or not url or url in taken:
                raise ValueError(
                    f"priority_lanes[{queue!r}][{lowest}] must be the URL of a queue of its "
                    f"own (not a job queue or a dead-letter queue), got {url!r}"
                )
            taken.add(url)
        lanes[queue] = tuple(sorted(bands.items(), reverse=True))
    return lanes


def parse_lanes(text: str, what: str) -> dict[str, dict[int, str]]:
    """``"default@1=URL"`` as ``{"default": {1: URL}}``; an error names the format."""
    lanes: dict[str, dict[int, str]] = {}
    for queue_band, url in parse_urls(text, what).items():
        queue, sep, lowest = queue_band.rpartition("@")
        if not sep or not queue or not lowest.lstrip("-").isdigit():
            raise ValueError(f"{what} must look like {LANES_FORMAT}, got {text!r}")
        lanes.setdefault(queue, {})[int(lowest)] = url
    return lanes


def _urls(value: Mapping[str, str], what: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be a mapping of queue name to SQS queue URL")
    for queue, url in value.items():
        check_queue_name(queue)
        if not isinstance(url, str) or not url:
            raise ValueError(f"{what}[{queue!r}] must be a queue URL, got {url!r}")
    return dict(value)


def parse_urls(text: str, what: str) -> dict[str, str]:
    """``"default=URL,high=URL"`` as a mapping; an error names ``what`` and the format."""
    urls: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        queue, sep, url = part.partition("=")
        if not sep or not queue.strip() or not url.strip():
            raise ValueError(f"{what} must look like 'default=URL,high=URL', got {text!r}")
        urls[queue.strip()] = url.strip()
    return urls


def env_arguments() -> dict[str, Any]:
    table = os.environ.get(TABLE_ENV)
    queues = os.environ.get(QUEUES_ENV)
    if not table or not queues:
        raise ValueError(
            f"SqsJobStore.from_env() needs {TABLE_ENV} and {QUEUES_ENV} "
            f"(e.g. {QUEUES_ENV}='default=https://sqs.../jobs')"
        )
    arguments: dict[str, Any] = {
        "table_name": table,
        "queue_urls": parse_urls(queues, QUEUES_ENV),
    }
    dead = os.environ.get(DEAD_LETTER_ENV)
    if dead:
        arguments["dead_letter_queue_urls"] = parse_urls(dead, DEAD_LETTER_ENV)
    lanes = os.environ.get(LANES_ENV)
    if lanes:
        arguments["priority_lanes"] = parse_lanes(lanes, LANES_ENV)
    shards = os.environ.get(SHARDS_ENV)
    if shards:
        arguments["index_shards"] = parse_shards(shards, SHARDS_ENV)
    record_format = os.environ.get(FORMAT_ENV)
    if record_format:
        arguments["record_format"] = parse_format(record_format, FORMAT_ENV)
    return arguments


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
    arguments: dict[str, Any] = {
        "queue_urls": {},
        "dead_letter_queue_urls": {},
        "priority_lanes": {},
    }
    agreed: tuple[str, int] | None = None
    for name in [n.strip() for n in stack_name.split(",") if n.strip()]:
        outputs = _stack_outputs(name, send)
        table = arguments.setdefault("table_name", outputs["TableName"])
        if table != outputs["TableName"]:
            raise ValueError(
                f"Stacks {stack_name!r} name different tables ({table!r} and "
                f"{outputs['TableName']!r}); one store serves one table"
            )
        arguments["queue_urls"].update(parse_urls(outputs["QueueUrls"], "QueueUrls"))
        if outputs.get("DeadLetterQueueUrls"):
            dead = parse_urls(outputs["DeadLetterQueueUrls"], "DeadLetterQueueUrls")
            arguments["dead_letter_queue_urls"].update(dead)
        if outputs.get(LANES_OUTPUT):
            arguments["priority_lanes"].update(parse_lanes(outputs[LANES_OUTPUT], LANES_OUTPUT))
        shards = parse_shards(outputs.get(SHARDS_OUTPUT, str(DEFAULT_SHARDS)), SHARDS_OUTPUT)
        agreed = _agree_on_shards(agreed, name, shards)
        arguments["index_shards"] = shards
        found = parse_format(outputs.get(FORMAT_OUTPUT, "1"), FORMAT_OUTPUT)
        # Stacks sharing a table: the oldest readers any of them may still run decide.
        arguments["record_format"] = min(found, arguments.get("record_format", found))
    if "table_name" not in arguments:
        raise ValueError(f"No stack named in {stack_name!r}")
    for optional in ("dead_letter_queue_urls", "priority_lanes"):
        if not arguments[optional]:
            del arguments[optional]
    return arguments


def _agree_on_shards(agreed: tuple[str, int] | None, name: str, shards: int) -> tuple[str, int]:
    """Every stack on one table must list it with one shard count: a store reading fewer
    shards than another writes would miss that one's jobs in listings and stats."""
    if agreed is not None and agreed[1] != shards:
        raise ValueError(
            f"Stacks {agreed[0]!r} and {name!r} share one table but give IndexShards "
            f"{agreed[1]} and {shards}; deploy both with the same IndexShards (it may only "
            "grow: docs/scaling.md)"
        )
    return agreed or (name, shards)


def _stack_outputs(stack_name: str, send: Send) -> dict[str, str]:
    reply = send(Call("cloudformation", "describe_stacks", {"StackName": stack_name}))
    outputs = {o["OutputKey"]: o["OutputValue"] for o in reply["Stacks"][0].get("Outputs", [])}
    missing = sorted(set(STACK_OUTPUTS) - set(outputs))
    if missing:
        raise ValueError(f"Stack {stack_name!r} has no output(s) {', '.join(missing)}")
    return outputs
