"""The chaos tests' handlers, served by ``sqsjobs worker tests.chaos.handlers:registry``.

Each execution appends ``"{job_id} {attempt} {pid}\\n"`` to the file named by
``CHAOS_LOG`` with one ``O_APPEND`` write, so lines from several processes never
interleave and a line is either wholly there or absent when a process is SIGKILLed.
That file is the side effect the test counts: a job that ran twice has two lines.

``chaos.step`` then succeeds; ``chaos.poison`` then fails for good (``JobFatalError``),
so its job dies on that attempt and its message goes to the dead-letter queue;
``chaos.link`` returns one more than the sum of its parents' results, so the last job of
a chain of ``n`` returns ``n`` only if each one was handed the result before it.
"""

from __future__ import annotations

import asyncio
import os

from sqsjobs import JobContext, JobFatalError, JobRegistry

LOG_ENV = "CHAOS_LOG"
SLEEP_ENV = "CHAOS_SLEEP"

registry = JobRegistry()
_log_fd: list[int] = []


def _log() -> int:
    """The side-effect log, opened once per process for appending."""
    if not _log_fd:
        _log_fd.append(os.open(os.environ[LOG_ENV], os.O_WRONLY | os.O_APPEND | os.O_CREAT))
    return _log_fd[0]


@registry.handler("chaos.step")
async def step(ctx: JobContext) -> None:
    os.write(_log(), f"{ctx.job.id} {ctx.attempt} {os.getpid()}\n".encode())
    await asyncio.sleep(float(os.environ.get(SLEEP_ENV, "0.02")))


@registry.handler("chaos.poison")
async def poison(ctx: JobContext) -> None:
    os.write(_log(), f"{ctx.job.id} {ctx.attempt} {os.getpid()}\n".encode())
    raise JobFatalError("chaos: poison payload, never retried")


@registry.handler("chaos.link")
async def link(ctx: JobContext) -> int:
    os.write(_log(), f"{ctx.job.id} {ctx.attempt} {os.getpid()}\n".encode())
    await asyncio.sleep(float(os.environ.get(SLEEP_ENV, "0.02")))
    return 1 + sum(int(result) for result in ctx.parent_results.values())
