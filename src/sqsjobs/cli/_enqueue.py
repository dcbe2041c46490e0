"""``sqsjobs enqueue``: put one job on a queue from a shell, a script or a runbook.

Every option of ``SyncJobQueue.enqueue`` has a flag, checked by the rule the library
applies to it (``core.validation``), so a value is refused with the same words whichever way
it arrives. Input that cannot be a job (bad JSON, an unreadable payload file, a value
outside its range, a naive ``--run-at``, an unknown queue) is bad usage: exit 2, nothing
sent. A valid request the store refuses (an idempotency key already bound to a different
job) exits 1. A repeated enqueue with the same key and payload is not a failure: it
prints the existing job and says it was a duplicate.

The record is what applies: a worker runs the job with the record's options. With
``--app MODULE:REGISTRY`` (imported as ``sqsjobs worker`` imports it, ``_app``) the
producer has the registry, so the handler's declared queue, max_attempts, timeout and
lease fill the options not given, and a name no handler has or a payload its model
refuses is bad usage, nothing written. Without it the record gets the library's defaults,
and a worker whose handler declares others warns that they do not apply.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.text import Text

from .. import EnqueueResult, JobConfigError, JobRegistry, SyncJobQueue
from ..core.defaults import DEFAULT_LEASE, DEFAULT_MAX_ATTEMPTS, DEFAULT_TIMEOUT
from ..core.fields import LABELS_MAX, PARENTS_MAX, check_labels
from ..core.validation import (
    DELAY,
    LEASE,
    MAX_PRIORITY,
    MIN_PRIORITY,
    TIMEOUT,
    integer,
    seconds,
)
from ._app import load_registry
from ._config import StoreConfig, default_queue, store_options
from ._errors import usage_error
from ._options import json_option
from ._payload import read_payload
from ._render import job_record, status_text, write_json

T = TypeVar("T")
PRIORITY = "signed 32-bit"
PAYLOAD_HELP = (
    "The job's payload as JSON: inline, @FILE to read a file, or - to read stdin "
    "(UTF-8; default: null)."
)
RUN_AT_HELP = (
    "Run no sooner than this instant: ISO 8601 with a UTC offset, e.g. "
    "2026-12-24T09:00:00+01:00 or 2026-12-24T08:00:00Z (at most 366 days ahead; "
    "for a relative time use --delay)."
)
APP_HELP = (
    "The handlers, as `sqsjobs worker` takes them, e.g. myapp.jobs:registry: the handler's "
    "declared queue, max attempts, timeout and lease apply, and a name or payload it would "
    "refuse is refused here."
)
WITH_APP = "the handler's with --app, else"


def checked(rule: Callable[[Any], T]) -> Callable[[click.Context, click.Parameter, Any], T | None]:
    """A click callback applying the library's ``rule``: its refusal is bad usage, exit 2."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> T | None:
        if value is None:
            return None
        try:
            return rule(value)
        except ValueError as refused:  # JobConfigError is one too
            raise click.BadParameter(str(refused), ctx, param) from None

    return callback


def parsed_labels(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str] | None:
    """``--label KEY=VALUE`` options as the mapping ``enqueue(labels=...)`` takes, checked
    by its rule (``core.fields.check_labels``); none given is ``None``."""
    if not values:
        return None
    labels: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", ctx, param)
        labels[key] = text
    try:
        return check_labels(labels)
    except ValueError as refused:
        raise click.BadParameter(str(refused), ctx, param) from None


def aware_instant(value: str) -> datetime:
    """An ISO 8601 instant with its offset; one without is refused, not guessed."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"{value!r} is not an ISO 8601 date and time, e.g. 2026-12-24T09:00:00+01:00"
        ) from None
    if moment.utcoffset() is None:
        raise ValueError(
            f"{value!r} has no UTC offset, so it could mean any time zone: add one, "
            f"e.g. {value}Z or {value}+01:00"
        )
    return moment


@click.command()
@click.argument("name")
@click.option("--app", metavar="MODULE:REGISTRY", callback=load_registry, help=APP_HELP)
@click.option("--payload", metavar="JSON|@FILE|-", callback=read_payload, help=PAYLOAD_HELP)
@click.option(
    "--queue",
    "-q",
    help=f"Queue name (default: {WITH_APP} 'default', or the store's only queue).",
)
@click.option(
    "--delay",
    type=float,
    metavar="SECONDS",
    callback=checked(lambda v: seconds(v, "delay", DELAY, code=None)),
    help="Run no sooner than this many seconds from now (at most 366 days).",
)
@click.option("--run-at", metavar="WHEN", callback=checked(aware_instant), help=RUN_AT_HELP)
@click.option(
    "--priority",
    type=int,
    default=0,
    show_default=True,
    callback=checked(
        lambda v: integer(
            v, "priority", minimum=MIN_PRIORITY, maximum=MAX_PRIORITY, why=PRIORITY, code=None
        )
    ),
    help=f"Higher runs first ({MIN_PRIORITY} to {MAX_PRIORITY}).",
)
@click.option(
    "--max-attempts",
    type=int,
    metavar="N",
    callback=checked(lambda v: integer(v, "max_attempts", minimum=1, code=None)),
    help=f"Attempts before the job is dead, at least 1 (default: {WITH_APP} "
    f"{DEFAULT_MAX_ATTEMPTS}).",
)
@click.option(
    "--timeout",
    type=float,
    metavar="SECONDS",
    callback=checked(lambda v: seconds(v, "timeout", TIMEOUT, code=None)),
    help="Seconds one attempt may run, 0 for no limit, at most 7 days "
    f"(default: {WITH_APP} {DEFAULT_TIMEOUT:g}).",
)
@click.option(
    "--lease",
    type=float,
    metavar="SECONDS",
    callback=checked(lambda v: seconds(v, "lease", LEASE, code=None)),
    help="Seconds a claim holds the job unless its heartbeats renew it, above 0 and at "
    f"most 43200 (default: {WITH_APP} {DEFAULT_LEASE:g}).",
)
@click.option("--idempotency-key", metavar="KEY", help="Enqueue at most once per key.")
@click.option("--tenant", metavar="TENANT", help="Tenant the job belongs to.")
@click.option(
    "--group",
    metavar="GROUP",
    help="Message group: on a FIFO queue its jobs run one at a time, in order "
    "(default: the tenant, else the queue).",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="KEY=VALUE",
    callback=parsed_labels,
    help=f"A free-form tag kept on the job (repeat for more, at most {LABELS_MAX}), "
    "e.g. --label team=billing.",
)
@click.option(
    "--after",
    multiple=True,
    metavar="JOB_ID",
    callback=lambda ctx, param, values: list(values) or None,
    help="A job this one waits for: it runs once every --after job has completed, and "
    "is cancelled if one dies or is cancelled (repeat for more, at most "
    f"{PARENTS_MAX}).",
)
@json_option("the job as one object (for a duplicate, the existing job)")
@store_options
def enqueue(
    name: str,
    app: JobRegistry | None,
    payload: Any,
    as_json: bool,
    store: StoreConfig,
    **options: Any,
) -> None:
    """Enqueue job NAME; print its id and whether it was a duplicate.

    Every other option is ``enqueue()``'s of the same name, passed through as it is
    (``core.options``): the library checks it, and its refusal is bad usage.
    """
    if options["delay"] is not None and options["run_at"] is not None:
        raise click.UsageError("Pass --delay or --run-at, not both.")
    with store.open() as jobs:
        producer = SyncJobQueue(jobs, default_queue=default_queue(jobs), registry=app)
        try:
            result = producer.enqueue(name, payload, **options)
        except JobConfigError as error:
            raise usage_error(error) from error
    if as_json:
        write_json(job_record(result.job), sys.stdout)
    else:
        Console(highlight=False).print(outcome(result), soft_wrap=True)


def outcome(result: EnqueueResult) -> Text:
    """``Enqueued job <id> (name on queue, status)``, or the job the key already named."""
    job = result.job
    text = Text("Duplicate: job " if result.duplicate else "Enqueued job ")
    text.append(job.id, style="bold")
    text.append(f" ({job.name} on {job.queue}, ").append_text(status_text(job.status))
    text.append(")")
    if result.duplicate:
        text.append(f" has idempotency key {job.idempotency_key!r}; nothing new was enqueued")
    return text
