"""Which of a queue's SQS queues a worker's next claim reads, in what order: the plan.

A claim asks ``LanePicker.plan`` once for the SQS queues to read, reads them in order
until one yields jobs, and tells ``LanePicker.record`` once what each read yielded.

A job whose priority falls in a lane's band is sent twice: to the queue and to the lane
(``flows.put``). So the queue alone holds a message for every job, and a lane holds the
urgent ones only, not stuck behind the queue's backlog. The rules here keep what that
costs in requests bounded:

- **Idle**: while the queue's last receive found nothing, lanes are not read at all; the
  worker long-polls the queue alone, one request per 20 s however many lanes it has,
  and an urgent job wakes it through its copy on the queue.
- **Busy**: each claim reads the lanes first, highest band first, with a short poll. A
  lane found empty is left alone until both a quiet period has passed (``QUIET_FIRST``
  seconds, doubling to ``QUIET_MOST``) and the queue has been received from
  ``RECEIVES_FIRST`` times (doubling to ``RECEIVES_MOST``). So a busy worker with no
  urgent jobs pays at most one lane receive per ``RECEIVES_MOST`` receives of the queue
  (each up to ten jobs) and per ``QUIET_MOST`` seconds, and an urgent job arriving in a
  busy spell is seen once both have passed.
- **Starvation guard**: after ``SHARE - 1`` consecutive jobs from lanes, the next claim
  reads the queue first, so at least one job in ``SHARE`` comes from the queue's backlog
  while the lanes keep yielding.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import NamedTuple

from ..wire.layout import Lanes

QUIET_FIRST = 1.0
QUIET_MOST = 8.0
RECEIVES_FIRST = 16
RECEIVES_MOST = 64
SHARE = 10


class Read(NamedTuple):
    """What one read of a claim's plan yielded."""

    lane: str | None  # the lane's SQS queue URL; None: the queue itself
    found: bool  # it had messages, held or received
    received: bool  # a ReceiveMessage request brought them (held ones were paid for before)
    jobs: int  # claimed from them


class _Quiet:
    __slots__ = ("after", "backoff", "receives", "until")

    def __init__(self) -> None:
        self.until = 0.0  # not before this instant (monotonic)
        self.after = 0  # nor before the queue's receive count reaches this
        self.backoff = 0.0
        self.receives = 0


class LanePicker:
    """Per queue and lane, what the last reads found; shared by a store's claims."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: set[str] = set()
        self._streak: dict[str, int] = {}  # per queue: jobs from lanes since its own
        self._quiet: dict[str, _Quiet] = {}  # per lane URL
        self._receives: dict[str, int] = {}  # per queue: receives that found messages

    def plan(self, queue: str, lanes: Lanes, now: float) -> list[str | None]:
        """Where the next claim reads, in order: lane URLs, and ``None`` for the queue.

        The plan always ends with the queue itself, the only read that may long-poll.
        ``now`` is monotonic.
        """
        with self._lock:
            if not lanes or queue in self._idle:
                return [None]  # an idle queue's long poll wakes for every job, lanes' too
            first: list[str | None] = [None] if self._streak.get(queue, 0) >= SHARE - 1 else []
            receives = self._receives.get(queue, 0)
            awake = [url for _, url in lanes if not self._is_quiet(url, receives, now)]
            return [*first, *awake, None]

    def record(self, queue: str, reads: Sequence[Read], now: float) -> None:
        """Learn from a claim's reads, in the order they were made (``now``: monotonic)."""
        with self._lock:
            for read in reads:
                if read.lane is None:
                    self._queue_read(queue, read)
                else:
                    self._lane_read(queue, read, now)

    def _is_quiet(self, lane: str, receives: int, now: float) -> bool:
        found = self._quiet.get(lane)
        return found is not None and (now < found.until or receives < found.after)

    def _lane_read(self, queue: str, read: Read, now: float) -> None:
        assert read.lane is not None
        quiet = self._quiet.setdefault(read.lane, _Quiet())
        if read.found:
            quiet.backoff, quiet.receives, quiet.until, quiet.after = 0.0, 0, 0.0, 0
        else:
            quiet.backoff = min(QUIET_MOST, max(QUIET_FIRST, quiet.backoff * 2))
            quiet.receives = min(RECEIVES_MOST, max(RECEIVES_FIRST, quiet.receives * 2))
            quiet.until = now + quiet.backoff
            quiet.after = self._receives.get(queue, 0) + quiet.receives
        if read.jobs:
            self._streak[queue] = self._streak.get(queue, 0) + read.jobs

    def _queue_read(self, queue: str, read: Read) -> None:
        if read.received:
            self._receives[queue] = self._receives.get(queue, 0) + 1
        if read.found:
            self._idle.discard(queue)
        else:
            self._idle.add(queue)
        if read.jobs:
            self._streak[queue] = 0
