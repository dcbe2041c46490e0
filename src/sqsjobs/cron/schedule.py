"""Cron ticks that enqueue jobs, safe to run in every worker replica.

Each tick enqueues with the idempotency key ``cron/{name}/{tick}`` (tick in UTC), so
however many workers carry the same ``Cron`` list, each tick yields exactly one job.
A tick missed while no worker ran is not replayed: the schedule resumes at the next one.
A scheduled Lambda function (``sqsjobs.aws.lambda_.make_cron_handler``) enqueues the
ticks of a recent span instead, under the same keys, so it catches up what it missed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from ..core.errors import JobConfigError
from ..core.requests import ENQUEUE_OPTIONS, EnqueueRequest
from ..core.validation import check_job_name, plain_json
from .keys import tick_key

CRON_OPTIONS = ENQUEUE_OPTIONS - {"idempotency_key"}


def check_timezone(timezone: str) -> str:
    """``timezone`` if it names a zone crons can be read in."""
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError, TypeError, OSError):  # OSError: a directory
        raise JobConfigError(
            "invalid_option",
            f"Invalid cron timezone {timezone!r}: must be an IANA name like "
            "'UTC' or 'Europe/Berlin'",
        ) from None
    return timezone


# Each field's name and what it takes, in schedule order.
FIELDS = (
    ("minute", "0-59"),
    ("hour", "0-23"),
    ("day-of-month", "1-31"),
    ("month", "1-12 or JAN-DEC"),
    ("day-of-week", "0-6 or SUN-SAT"),
)
FIVE_FIELDS = "five fields (minute hour day-of-month month day-of-week), e.g. '*/5 * * * *'"


def schedule_problem(schedule: object) -> str | None:
    """What is wrong with a five-field cron schedule, naming the field; None: nothing.

    A field is judged alone, the others ``*``, so the message says which one is wrong
    and what it takes instead of only that the whole is not a schedule.
    """
    if not isinstance(schedule, str):
        return f"must be a string of {FIVE_FIELDS}"
    fields = schedule.split()
    if len(fields) != 5:
        return f"has {len(fields)} field{'' if len(fields) == 1 else 's'}; must be {FIVE_FIELDS}"
    for index, (name, allowed) in enumerate(FIELDS):
        alone = ["*"] * 5
        alone[index] = fields[index]
        if not croniter.is_valid(" ".join(alone)):
            return (
                f"the {name} field {fields[index]!r} is not valid; allowed are {allowed}, *, "
                "lists (a,b), ranges (a-b) and steps (*/n, a-b/n)"
            )
    if not croniter.is_valid(schedule):
        return f"its fields do not make a schedule together; must be {FIVE_FIELDS}"
    return None


@dataclass(frozen=True)
class Cron:
    """Enqueue job ``name`` at every tick of the five-field ``schedule`` in ``timezone``."""

    schedule: str
    name: str
    payload: Any = None
    timezone: str = "UTC"
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_job_name(self.name)
        problem = schedule_problem(self.schedule)
        if problem is not None:
            raise JobConfigError(
                "invalid_option", f"Invalid cron schedule {self.schedule!r}: {problem}"
            )
        check_timezone(self.timezone)
        unknown = set(self.options) - CRON_OPTIONS
        if unknown:
            raise JobConfigError(
                "invalid_option",
                f"Invalid cron options {sorted(unknown)}: allowed are {sorted(CRON_OPTIONS)}",
            )
        plain_json(self.payload)
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    def next_tick(self, after: float) -> float:
        """Epoch seconds of the first tick strictly after ``after``."""
        start = datetime.fromtimestamp(after, ZoneInfo(self.timezone))
        tick: datetime = croniter(self.schedule, start).get_next(datetime)
        return tick.timestamp()

    def ticks(self, after: float, until: float) -> list[float]:
        """The ticks in ``(after, until]``: what a scheduled run covering that span enqueues."""
        found: list[float] = []
        tick = self.next_tick(after)
        while tick <= until:
            found.append(tick)
            tick = self.next_tick(tick)
        return found

    def request(self, tick: float) -> EnqueueRequest:
        """The enqueue of ``tick``'s job, keyed ``cron/{name}/{tick}`` so it is made once."""
        return EnqueueRequest(
            name=self.name,
            payload=self.payload,
            idempotency_key=tick_key(self.name, tick),
            **dict(self.options),
        )
