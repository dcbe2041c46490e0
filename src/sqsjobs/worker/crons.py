"""The crons a worker runs: the registry's and those it was given, each with its handler.

A tick is a job like any other: enqueued for a name with no handler, it would be claimed,
fail on every attempt and die, once per tick, until someone read the dead letters. A
worker that runs a cron also serves its jobs' name, so one without that handler is a
typo or a wrong registry, refused when the worker is built. Each cron then runs in a
task of its own (``run_cron``) until the worker stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

from ..core.errors import JobConfigError, describe_error
from ..core.text import listed_names
from ..cron.schedule import Cron
from ..handlers.registry import JobRegistry
from ..observe.log import Event
from ..producer.queue import JobQueue

Log = Callable[..., None]  # (level, event, message, job=None, **extra), the worker's log


def worker_crons(registry: JobRegistry, given: Iterable[Cron]) -> tuple[Cron, ...]:
    """``given`` and the registry's crons, each once; refused if one names no handler."""
    crons = registry.crons_with(given)
    missing = sorted({cron.name for cron in crons if cron.name not in registry})
    if missing:
        raise JobConfigError(
            "invalid_option",
            f"Cron job {', '.join(map(repr, missing))} has no handler in this worker "
            f"(handlers: {listed_names(registry)}): every tick would die. Register the handler, or "
            "run the cron in the worker that has it",
        )
    return crons


async def run_cron(cron: Cron, queue: JobQueue, clock: Callable[[], float], log: Log) -> None:
    """Enqueue each tick of ``cron`` when it is due, until cancelled; a failed enqueue is
    logged and that tick skipped (its key makes a replica's enqueue of it the same job)."""
    tick = cron.next_tick(clock())
    while True:
        await asyncio.sleep(max(0.0, tick - clock()))
        if clock() < tick:
            continue
        try:
            await queue.enqueue_many([cron.request(tick)])
        except Exception as error:
            log(
                logging.ERROR,
                Event.CRON_FAILED,
                f"Cron {cron.name!r} could not enqueue its tick: {describe_error(error)}",
                error=describe_error(error),
            )
        tick = cron.next_tick(max(tick, clock()))
