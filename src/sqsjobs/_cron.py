"""Cron ticks that enqueue jobs, safe to run in every worker replica.

Each tick enqueues with the idempotency key ``cron/{name}/{tick}`` (tick in UTC), so
however many workers carry the same ``Cron`` list, each tick yields exactly one job.
A tick missed while no worker ran is not replayed: the schedule resumes at the next one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from ._enqueue import ENQUEUE_OPTIONS
from ._errors import JobConfigError
from ._requests import EnqueueRequest
from ._validation import check_job_name, plain_json

CRON_OPTIONS = ENQUEUE_OPTIONS - {"idempotency_key"}


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
        fields = self.schedule.split() if isinstance(self.schedule, str) else []
        if len(fields) != 5 or not croniter.is_valid(self.schedule):
            raise JobConfigError(
                "invalid_option",
                f"Invalid cron schedule {self.schedule!r}: must be five fields "
                "(minute hour day-of-month month day-of-week), e.g. '*/5 * * * *'",
            )
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError, TypeError):
            raise JobConfigError(
                "invalid_option",
                f"Invalid cron timezone {self.timezone!r}: must be an IANA name like "
                "'UTC' or 'Europe/Berlin'",
            ) from None
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

    def request(self, tick: float) -> EnqueueRequest:
        stamp = datetime.fromtimestamp(tick, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return EnqueueRequest(
            name=self.name,
            payload=self.payload,
            idempotency_key=f"cron/{self.name}/{stamp}",
            **dict(self.options),
        )
