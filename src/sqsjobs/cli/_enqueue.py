"""``sqsjobs enqueue``: put one job on a queue from a shell, a script or a runbook.

The payload is JSON text. Input that cannot be a job (bad JSON, a name or key outside
its grammar, an unknown queue) is bad usage: exit 2, nothing sent. A valid request the
store refuses (an idempotency key already bound to a different job) exits 1. A repeated
enqueue with the same key and payload is not a failure: it prints the existing job and
says it was a duplicate.
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from .. import EnqueueResult, JobConfigError, SyncJobQueue
from ._config import StoreConfig, default_queue, store_options
from ._errors import usage_error
from ._render import status_text


def parse_json(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """The payload option's JSON text as a value; the error says where it stops being JSON."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as error:
        raise click.BadParameter(
            f"not valid JSON: {error.msg} at line {error.lineno} column {error.colno}", ctx, param
        ) from None


@click.command()
@click.argument("name")
@click.option(
    "--payload", metavar="JSON", callback=parse_json, help="The job's payload (default: null)."
)
@click.option("--queue", "-q", help="Queue name (default: 'default', or the store's only queue).")
@click.option("--delay", type=click.FloatRange(0), metavar="SECONDS", help="Run no sooner.")
@click.option("--idempotency-key", metavar="KEY", help="Enqueue at most once per key.")
@click.option("--tenant", metavar="TENANT", help="Tenant the job belongs to.")
@store_options
def enqueue(
    name: str,
    payload: Any,
    queue: str | None,
    delay: float | None,
    idempotency_key: str | None,
    tenant: str | None,
    store: StoreConfig,
) -> None:
    """Enqueue job NAME; print its id and whether it was a duplicate."""
    with store.open() as jobs:
        producer = SyncJobQueue(jobs, default_queue=default_queue(jobs))
        try:
            result = producer.enqueue(
                name,
                payload,
                queue=queue,
                delay=delay,
                idempotency_key=idempotency_key,
                tenant=tenant,
            )
        except JobConfigError as error:
            raise usage_error(error) from error
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
