"""What about a queue wants an operator's eye, in words, for ``sqsjobs stats`` and the dashboard.

Counts alone read the same for a healthy backlog and a stalled one. These are the
conditions that mean work is not moving or has failed, each said with what to do:

- jobs wait and no live worker serves their queue (none runs, or none can reach the
  store to write its presence record: its logs say which);
- the job due first has waited longer than ``LONG_WAIT`` (too few workers, or stuck);
- the queue's dead-letter queue holds messages (jobs that failed for good);
- jobs wait under a name no live worker of their queue has a handler for (a typo, or a
  handler not deployed): a worker that claims one fails it for good, so they can only die.

Pure functions of figures the stores already report (``QueueStats``, the presence
records), so the command line and the dashboard say the same thing the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .models import JobStatus
from .reports import QueueStats
from .times import epoch

LONG_WAIT = 180.0  # seconds the job due first may wait before the queue asks for attention


@dataclass(frozen=True)
class QueueHealth:
    """A queue's figures that bear on whether its work moves."""

    queue: str
    queued: int  # claimable now
    workers: int | None  # alive workers serving it; None: the store keeps no presence
    oldest_waiting: float | None = None  # seconds the job due first has been due
    dead_letters: int | None = None  # messages in its dead-letter queue; None: it has none
    unserved: Mapping[str, int] = field(default_factory=dict)  # waiting jobs by unserved name


def reasons(health: QueueHealth) -> list[str]:
    """Why ``health``'s queue needs attention, one sentence each; empty when it does not."""
    found: list[str] = []
    queue = health.queue
    if health.queued and health.workers == 0:
        jobs = "1 job waits" if health.queued == 1 else f"{health.queued} jobs wait"
        found.append(
            f"{jobs} and no worker serves queue {queue}: start one, or check the workers' logs"
        )
    if health.oldest_waiting is not None and health.oldest_waiting > LONG_WAIT:
        found.append(
            f"The oldest job of queue {queue} has waited {duration(health.oldest_waiting)}, "
            f"more than {duration(LONG_WAIT)}: add workers, or look for stuck ones"
        )
    if health.dead_letters:
        messages = "1 message" if health.dead_letters == 1 else f"{health.dead_letters} messages"
        found.append(
            f"{messages} in the dead-letter queue of {queue}: see `sqsjobs dlq list`, "
            "then fix and redrive"
        )
    if health.workers:  # with none at all, the first reason covers every name
        for name, count in sorted(health.unserved.items()):
            found.append(f"{name}: {count} waiting in queue {queue}, no worker serves it")
    return found


def duration(seconds: float) -> str:
    """A duration the way a person reads it at a glance: ``42s``, ``7m 03s``, ``3h 05m``."""
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    if whole < 86_400:
        return f"{whole // 3600}h {whole // 60 % 60:02d}m"
    return f"{whole // 86_400}d {whole // 3600 % 24:02d}h"


def health_of(stats: QueueStats, now: float) -> QueueHealth:
    """A queue's health from what ``stats()`` reported, judged at ``now``."""
    oldest = (
        None if stats.oldest_queued_at is None else max(0.0, now - epoch(stats.oldest_queued_at))
    )
    return QueueHealth(
        queue=stats.queue,
        queued=stats.counts.get(JobStatus.QUEUED, 0),
        workers=stats.workers,
        oldest_waiting=oldest,
        dead_letters=stats.dead_letter_messages,
        unserved=stats.unserved_names,
    )
