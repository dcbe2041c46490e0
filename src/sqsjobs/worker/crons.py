"""The crons a worker runs: the registry's and those it was given, each with its handler.

A tick is a job like any other: enqueued for a name with no handler, it would be claimed,
fail on every attempt and die, once per tick, until someone read the dead letters. A
worker that runs a cron also serves its jobs' name, so one without that handler is a
typo or a wrong registry, refused when the worker is built.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.errors import JobConfigError
from ..core.text import listed_names
from ..cron.schedule import Cron
from ..handlers.registry import JobRegistry


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
