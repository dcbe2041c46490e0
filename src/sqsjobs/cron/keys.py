"""A cron tick's idempotency key, ``cron/{name}/{stamp}``: what makes a tick one job.

Apart from the schedule because the key needs no cron parser: whoever enqueues a tick
(a worker replica, the Lambda cron function) and whoever reports on one spell it alike.
"""

from __future__ import annotations

from datetime import UTC, datetime


def tick_stamp(tick: float) -> str:
    """A tick as its key writes it: UTC, to the second."""
    return datetime.fromtimestamp(tick, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def tick_key(name: str, tick: float) -> str:
    """The idempotency key of job ``name``'s tick at ``tick``."""
    return f"cron/{name}/{tick_stamp(tick)}"
