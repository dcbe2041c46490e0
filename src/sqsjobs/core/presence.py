"""Which workers are alive: the presence record each one keeps, and what readers make of it.

A queue whose jobs wait looks the same whether no worker runs, every worker is busy, or
the workers cannot reach AWS: the counts and depths do not say which. So each worker (a
``JobWorker`` process, a Lambda execution environment running ``make_lambda_handler``)
keeps a record of itself in its store: who and where it is, which release runs, what it
serves, how busy it is and when it last claimed. It rewrites the record every
``PRESENCE_INTERVAL`` seconds, and each write says the record holds until
``PRESENCE_TTL`` seconds later. A worker that stops cleanly ends its record at once; one
that dies leaves a record that readers take for gone once it has run out, whether or not
the store has deleted it yet (DynamoDB's TTL deletes days late), as they do for ended
jobs past their retention.

The stores keep these records (``core.store.PresenceStore``); ``worker.presence`` writes
them; the command line (``sqsjobs workers``, ``stats``) and the dashboard read them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from types import MappingProxyType
from typing import NamedTuple

from .times import epoch

PRESENCE_INTERVAL = 30.0  # seconds between a worker's writes of its presence record
# A record not rewritten for this long is gone: three intervals, so a write that fails
# once, or lands late on a loaded host, does not make a live worker look dead.
PRESENCE_TTL = 3 * PRESENCE_INTERVAL


class WorkerPresence(NamedTuple):
    """One worker as it last wrote itself down (every datetime aware UTC).

    ``queues`` are the queues it claims from, ``names`` the job names its registry
    serves; ``running`` the jobs it ran when it wrote; ``last_claims`` when it last
    claimed a job from each queue (a queue it has not claimed from is absent).
    ``expires_at`` is when the record stops counting unless it is written again: a clean
    stop sets it to the moment of the stop. A ``NamedTuple``, not a dataclass: the Lambda
    handler builds one, and a frozen dataclass costs its cold start six generated methods.
    """

    worker_id: str
    host: str
    pid: int | None
    version: str
    queues: tuple[str, ...]
    names: tuple[str, ...]
    concurrency: int
    running: int
    started_at: datetime
    heartbeat_at: datetime
    expires_at: datetime
    last_claims: Mapping[str, datetime] = MappingProxyType({})

    @property
    def last_claim_at(self) -> datetime | None:
        """When it last claimed a job, from any of its queues; ``None`` if never."""
        return max(self.last_claims.values(), default=None)

    def alive(self, now: float) -> bool:
        """Whether the record still counts at ``now`` (epoch seconds)."""
        return epoch(self.expires_at) > now


def serving(presences: Iterable[WorkerPresence], queue: str) -> list[WorkerPresence]:
    """The workers among ``presences`` that claim from ``queue``."""
    return [presence for presence in presences if queue in presence.queues]


def last_claim(presences: Iterable[WorkerPresence], queue: str) -> datetime | None:
    """When any of ``presences`` last claimed from ``queue``; ``None`` if none did."""
    return max(
        (p.last_claims[queue] for p in presences if queue in p.last_claims),
        default=None,
    )


def served_names(presences: Iterable[WorkerPresence], queue: str) -> frozenset[str]:
    """The job names some worker of ``queue`` has a handler for."""
    return frozenset(name for p in serving(presences, queue) for name in p.names)


def versions(presences: Iterable[WorkerPresence]) -> dict[str, int]:
    """How many workers run each release, the most common first: during a rolling
    upgrade, the old release's count reaching zero is the sign the last one has gone."""
    return dict(Counter(presence.version for presence in presences).most_common())
