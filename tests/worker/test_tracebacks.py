"""A failed handler's traceback: on the record and in the failure's log line.

What an engineer paged at night needs is where the handler failed: its frames (not the
worker's that led into it), a bounded text, and no secret a source line or a URL in the
message quoted.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from sqsjobs import JobRegistry, JobStatus, JobWorker
from sqsjobs.core.tracebacks import MAX_TRACEBACK_BYTES
from sqsjobs.observe.log_format import JsonFormatter, TextFormatter

from .conftest import Env

THIS_FILE = __file__.rsplit("/", 1)[-1]


def post_to_ledger(entry: dict[str, Any]) -> None:
    ledger_call(entry["invoice"], api_key="sk_live_51HqZoë")  # a line a traceback quotes


def ledger_call(invoice: str, *, api_key: str) -> None:
    raise KeyError(invoice)


def walk_left(depth: int) -> None:
    """Two functions calling each other: Python collapses only identical frames in a row."""
    if depth == 0:
        raise RecursionError("ledger walk went too deep at «Åsa»")
    walk_right(depth - 1)


def walk_right(depth: int) -> None:
    walk_left(depth - 1)


async def run_one(env: Env, registry: JobRegistry, name: str, payload: Any = None) -> Any:
    job = (await env.queue.enqueue(name, payload, max_attempts=1)).job
    assert await JobWorker(env.queue, registry).run_once()
    stored = await env.queue.get(job.id)
    assert stored is not None and stored.status is JobStatus.DEAD
    return stored


async def test_an_async_handlers_failure_keeps_its_own_frames_only(env: Env) -> None:
    registry = JobRegistry()

    @registry.handler("ledger.post")
    async def post(payload: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        post_to_ledger(payload)

    dead = await run_one(env, registry, "ledger.post", {"invoice": "INV-7731"})
    trace = dead.last_traceback
    assert trace is not None and dead.last_error == "KeyError: 'INV-7731'"
    lines = trace.split("\n")
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-1] == "KeyError: 'INV-7731'"
    assert f'{THIS_FILE}", line' in lines[1] and lines[1].endswith("in post")  # the handler first
    assert "in post_to_ledger" in trace
    assert "sqsjobs/" not in trace and "asyncio" not in trace  # no runner frames
    assert "sk_live" not in trace and 'api_key="***"' in trace


async def test_a_sync_handler_run_in_a_thread_keeps_its_frames_and_chained_causes(env: Env) -> None:
    registry = JobRegistry()

    @registry.handler("ledger.sync")
    def post(payload: dict[str, Any]) -> None:
        try:
            post_to_ledger(payload)
        except KeyError as missing:
            url = "https://billing:hunter2@ledger.internal/post?token=abc123"
            raise RuntimeError(f"ledger refused the entry at {url}") from missing

    dead = await run_one(env, registry, "ledger.sync", {"invoice": "INV-9"})
    trace = dead.last_traceback
    assert trace is not None
    assert "The above exception was the direct cause of the following exception:" in trace
    assert "concurrent" not in trace and "threading" not in trace and "sqsjobs/" not in trace
    assert "hunter2" not in trace and "abc123" not in trace
    assert trace.endswith(
        "RuntimeError: ledger refused the entry at https://***@ledger.internal/post?token=***"
    )


async def test_a_deep_traceback_is_bounded_and_keeps_the_failing_end(env: Env) -> None:
    registry = JobRegistry()
    registry.add("ledger.deep", lambda payload: walk_left(400))
    dead = await run_one(env, registry, "ledger.deep")
    trace = dead.last_traceback
    assert trace is not None and len(trace.encode()) <= MAX_TRACEBACK_BYTES
    assert trace.startswith("Traceback (most recent call last):\n  … ")
    assert "lines left out" in trace.split("\n")[1]
    assert trace.endswith("RecursionError: ledger walk went too deep at «Åsa»")


async def test_failures_sqsjobs_raised_itself_keep_no_traceback(env: Env) -> None:
    registry = JobRegistry()

    @registry.handler("ledger.slow", timeout=0.05)
    async def slow(payload: None) -> None:
        await asyncio.sleep(30)

    job = (await env.queue.enqueue("ledger.slow", None, max_attempts=1, timeout=0.05)).job
    assert await JobWorker(env.queue, registry).run_once()
    dead = await env.queue.get(job.id)
    assert dead is not None and dead.last_error is not None
    assert dead.last_error.startswith("JobTimeoutError") and dead.last_traceback is None


@pytest.mark.parametrize("formatter", [TextFormatter(), JsonFormatter()], ids=["text", "json"])
async def test_the_failure_log_line_carries_the_traceback(
    env: Env, caplog: pytest.LogCaptureFixture, formatter: logging.Formatter
) -> None:
    registry = JobRegistry()
    registry.add("ledger.log", lambda payload: post_to_ledger(payload))
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        dead = await run_one(env, registry, "ledger.log", {"invoice": "INV-3"})
    [record] = [r for r in caplog.records if getattr(r, "event", None) == "jobs.dead"]
    line = formatter.format(record)
    if isinstance(formatter, JsonFormatter):
        assert json.loads(line)["traceback"] == dead.last_traceback
    else:
        first, *rest = line.split("\n")
        assert "dead-lettered" in first
        assert rest == [f"    {part}" for part in dead.last_traceback.split("\n")]
