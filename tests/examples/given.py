"""What a README fragment is given: the names of a Python block marked ``given:``, the files
of a shell block marked so. Run as a program, it runs one fragment:

    python -m tests.examples.given FRAGMENT.py NAME...

(with no NAME, for a whole program that awaits at its top level, as a notebook does) in
the session's directory (the README's ``app`` package beside it) and environment (the
emulator's endpoint, ``SQSJOBS_TABLE`` and ``SQSJOBS_QUEUES``). A fragment continues the
README's earlier blocks, so beside the names its mark lists it sees what the README
imports everywhere: every public name of ``sqsjobs``, and ``datetime``, ``timedelta``
and ``UTC``. Top-level ``await`` runs on the fragment's own event loop. A name the mark
lists that this module does not know fails the run, and so does a name the fragment
uses but neither its mark nor that list supplies (``NameError``): a fragment never
silently depends on something the README does not say.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import sys
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import sqsjobs
from sqsjobs import JobContext, JobQueue
from sqsjobs.aws import SqsJobStore

# The files a shell block marked ``given: NAME`` finds in its directory.
FILES = {
    "report.json": '{"month": "2026-11"}\n',
    "requirements.txt": "httpx>=0.27\n",  # a Lambda package's own dependencies
}


class Report(BaseModel):
    """The payload model a fragment's handler declares (``payload: Report``)."""

    month: str


async def send_email(payload: dict[str, Any], ctx: JobContext) -> None:
    """A handler a fragment registers (``registry.add("email.send", send_email)``)."""


Factory = Callable[[dict[str, Any], AsyncExitStack], Awaitable[Any]]


async def _store(_: dict[str, Any], stack: AsyncExitStack) -> SqsJobStore:
    """The README stacks' store (queues ``default`` and ``reports``), closed afterwards."""
    return await stack.enter_async_context(SqsJobStore.from_env())


async def _queue(names: dict[str, Any], stack: AsyncExitStack) -> JobQueue:
    return JobQueue(await _needed(names, "store", stack))


async def _registry(_: dict[str, Any], __: AsyncExitStack) -> sqsjobs.JobRegistry:
    """The workers' registry: the Quick start's (the ``app`` package the README writes),
    with a stand-in handler for each cron job the README schedules, as a worker refuses a
    cron whose handler it does not have."""
    from app.jobs import registry  # type: ignore[import-not-found]

    assert isinstance(registry, sqsjobs.JobRegistry)
    for name in CRON_JOBS:
        registry.add(name, _scheduled)
    return registry


CRON_JOBS = ("reports.nightly", "cache.warm")


async def _scheduled(ctx: JobContext) -> None:
    """Stands in for the handler of a job the README schedules (``CRON_JOBS``)."""


async def _job_id(names: dict[str, Any], stack: AsyncExitStack) -> str:
    """The id of a job that exists: a welcome email enqueued for the fragment."""
    queue = JobQueue(await _needed(names, "store", stack))
    result = await queue.enqueue("email.welcome", {"to": "ana@example.com", "name": "Ana"})
    return result.job.id


async def _orders_table(_: dict[str, Any], __: AsyncExitStack) -> str:
    """A table of the reader's own (orders, keyed by ``pk``) on the README's emulator."""
    import uuid

    import boto3

    name = f"orders-{uuid.uuid4().hex[:8]}"
    client = boto3.client("dynamodb")
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.close()
    return name


async def _app(_: dict[str, Any], __: AsyncExitStack) -> Any:
    """The reader's Starlette (or FastAPI) application, for a fragment that mounts on it."""
    from starlette.applications import Starlette

    return Starlette()


async def _constant(value: Any) -> Any:
    return value


NAMES: dict[str, Factory] = {
    "store": _store,
    "queue": _queue,
    "registry": _registry,
    "job_id": _job_id,
    "app": _app,
    "orders_table": _orders_table,
    "Report": lambda _, __: _constant(Report),
    "send_email": lambda _, __: _constant(send_email),
}


async def _needed(names: dict[str, Any], name: str, stack: AsyncExitStack) -> Any:
    """``name``'s value, made once per fragment (``queue`` and ``job_id`` share the store)."""
    if name not in names:
        names[name] = await NAMES[name](names, stack)
    return names[name]


def namespace_base() -> dict[str, Any]:
    """What every fragment sees without a mark saying so (see the module docstring)."""
    base: dict[str, Any] = {name: getattr(sqsjobs, name) for name in sqsjobs.__all__}
    return base | {"datetime": datetime, "timedelta": timedelta, "UTC": UTC}


async def run(path: str, source: str, given: list[str]) -> None:
    unknown = [name for name in given if name not in NAMES]
    if unknown:
        raise SystemExit(f"tests/examples/given.py supplies no {unknown}; it has {sorted(NAMES)}")
    code = compile(source, path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    async with AsyncExitStack() as stack:
        names: dict[str, Any] = {}
        for name in given:
            await _needed(names, name, stack)
        base = namespace_base() if given else {}  # a whole program is given nothing
        namespace = base | {name: names[name] for name in given}
        namespace["__name__"] = "__main__"
        result = eval(code, namespace)  # the fragment, as a script's top level runs
        if inspect.iscoroutine(result):
            await result


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], Path(sys.argv[1]).read_text(), sys.argv[2:]))
