"""``sqsjobs worker --cron``: crons given on the command line, run beside the registry's.

An operator can schedule an existing job without writing Python: ``--cron '0 3 * * *
reports.nightly'`` is five cron fields, then the job name; ``--cron-timezone`` says in
which timezone every ``--cron`` is read. The ``Cron`` built from each checks it, so a
bad one is bad usage (exit 2) before the worker connects to anything.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from .. import Cron, JobConfigError, JobRegistry
from ..cron.declared import merged
from ..cron.schedule import check_timezone
from ..observe.log import LOGGER_NAME

F = TypeVar("F", bound=Callable[..., Any])
FORM = "'MIN HOUR DAY MONTH WEEKDAY JOB' (five cron fields, then the job name)"
EXAMPLE = "'0 3 * * * reports.nightly'"
CRON_HELP = (
    f"Enqueue a job on a schedule: {FORM}, e.g. {EXAMPLE}. Repeat for several; the "
    "registry's crons run too. Every replica may run the same crons: each tick is "
    "enqueued once."
)
TIMEZONE_HELP = "IANA timezone the --cron schedules are read in, e.g. Europe/Berlin."
_logger = logging.getLogger(f"{LOGGER_NAME}.cli")


def cron_options(command: F) -> F:
    """Add ``--cron`` and ``--cron-timezone``, passed on as one ``crons`` tuple of ``Cron``."""

    @click.option("--cron", "cron_entries", multiple=True, metavar="'SCHEDULE JOB'", help=CRON_HELP)
    @click.option(
        "--cron-timezone",
        default="UTC",
        show_default=True,
        metavar="TZ",
        callback=_timezone,
        help=TIMEZONE_HELP,
    )
    @functools.wraps(command)
    def wrapper(
        *args: Any, cron_entries: tuple[str, ...], cron_timezone: str, **kwargs: Any
    ) -> Any:
        return command(*args, crons=parse_crons(cron_entries, cron_timezone), **kwargs)

    return wrapper  # type: ignore[return-value]


def _timezone(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        return check_timezone(value)
    except JobConfigError as error:
        raise click.BadParameter(str(error), ctx, param) from None
    except OSError:
        # ZoneInfo opens the key as a file of the tz database: a directory of it
        # ('America') or a name too long for a path fails there, and is no zone either.
        raise click.BadParameter(
            f"Invalid cron timezone {value!r}: must be an IANA name like 'UTC' or 'Europe/Berlin'",
            ctx,
            param,
        ) from None


def parse_crons(entries: Sequence[str], timezone: str) -> tuple[Cron, ...]:
    """One ``Cron`` per ``--cron`` value; a value ``Cron`` refuses is a usage error."""
    crons = []
    for entry in entries:
        fields = entry.split()
        if len(fields) != 6:
            raise _bad(f"expected {FORM}, e.g. {EXAMPLE}; got {entry!r}")
        try:
            crons.append(Cron(" ".join(fields[:5]), fields[5], timezone=timezone))
        except JobConfigError as error:
            raise _bad(f"{error} (in {entry!r})") from None
    return tuple(crons)


def _bad(message: str) -> click.BadParameter:
    return click.BadParameter(
        message, click.get_current_context(silent=True), param_hint="'--cron'"
    )


def log_crons(handlers: object, given: Sequence[Cron]) -> None:
    """One line naming every cron the worker runs: the command line's and the registry's."""
    crons = handlers.crons_with(given) if isinstance(handlers, JobRegistry) else merged(given)
    if crons:
        _logger.info(
            "Cron: %s", "; ".join(f"{c.name} at {c.schedule!r} ({c.timezone})" for c in crons)
        )
