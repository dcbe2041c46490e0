"""Crons declared in several places (a registry, a worker's ``cron=``, the command line).

Loading the cron parser happens here, on demand, because a registry is imported by
Lambda functions on the base install, which has no croniter: declaring a cron there
fails with one line naming the extra to install, and merely importing does not fail.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..core.errors import JobConfigError

if TYPE_CHECKING:
    from .schedule import Cron

CRON_EXTRA_HINT = "pip install 'sqsjobs[cron]'"


def cron_class() -> type[Cron]:
    """``Cron``, or a ``JobConfigError`` naming the extra when croniter is missing."""
    try:
        from .schedule import Cron
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] != "croniter":
            raise
        raise JobConfigError(
            "invalid_option",
            f"Cron schedules need the cron parser (croniter is not installed): {CRON_EXTRA_HINT}",
        ) from None
    return Cron


def merged(*groups: Iterable[Cron]) -> tuple[Cron, ...]:
    """Every cron of ``groups`` once, in order; a cron given twice runs once.

    Two crons may share a job name (a weekday and a weekend schedule of one report):
    their ticks have distinct keys, ``cron/{name}/{tick}``, unless they coincide.
    """
    kept: list[Cron] = []
    for group in groups:
        for cron in group:
            if not isinstance(cron, cron_class()):
                raise JobConfigError(
                    "invalid_option",
                    f"cron= takes Cron values, got {type(cron).__name__}: "
                    "use Cron('0 3 * * *', 'reports.nightly')",
                )
            if cron not in kept:
                kept.append(cron)
    return tuple(kept)
