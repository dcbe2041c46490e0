"""Which of a queue's SQS queues a worker's next claim reads: its lanes, or the queue.

A job whose priority falls in a lane's band is sent twice: to the queue and to the lane
(``flows.put``). So the queue alone holds a message for every job, and a lane holds the
urgent ones only, not stuck behind the queue's backlog. The rules here keep what that
costs in requests bounded:

- **Idle**: while the queue's last receive found nothing, lanes are not read at all; the
  worker long-polls the queue alone, one request per 20 s however many lanes it has,
  and an urgent job wakes it through its copy on the queue.
- **Busy**: each claim reads the lanes first, highest band first, with a short poll. A
  lane found empty is left alone for a quiet period, ``QUIET_FIRST`` seconds doubling to
  ``QUIET_MOST``, so a busy worker with no urgent jobs pays a few receives per
  ``QUIET_MOST`` seconds, not one per claim; an urgent job is seen within that time.
- **Starvation guard**: after ``SHARE - 1`` consecutive jobs from lanes, the next claim
  reads the queue first, so at least one job in ``SHARE`` comes from the queue's backlog
  while the lanes keep yielding.
"""

from __future__ import annotations

import threading

QUIET_FIRST = 1.0
QUIET_MOST = 8.0
SHARE = 10


class _Quiet:
    __slots__ = ("backoff", "until")

    def __init__(self) -> None:
        self.until = 0.0
        self.backoff = 0.0


class LanePicker:
    """Per queue and lane, what the last receives found; shared by a store's claims."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: set[str] = set()
        self._streak: dict[str, int] = {}
        self._quiet: dict[str, _Quiet] = {}

    def lanes_worth_reading(self, queue: str) -> bool:
        """Not while the queue is idle: its long poll wakes for every job, lanes' too."""
        with self._lock:
            return queue not in self._idle

    def queue_first(self, queue: str) -> bool:
        """The starvation guard: the queue's turn after ``SHARE - 1`` jobs from lanes."""
        with self._lock:
            return self._streak.get(queue, 0) >= SHARE - 1

    def quiet(self, lane: str, now: float) -> bool:
        with self._lock:
            found = self._quiet.get(lane)
            return found is not None and now < found.until

    def lane_read(self, queue: str, lane: str, received: bool, jobs: int, now: float) -> None:
        with self._lock:
            quiet = self._quiet.setdefault(lane, _Quiet())
            if received:
                quiet.backoff, quiet.until = 0.0, 0.0
            else:
                quiet.backoff = min(QUIET_MOST, max(QUIET_FIRST, quiet.backoff * 2))
                quiet.until = now + quiet.backoff
            if jobs:
                self._streak[queue] = self._streak.get(queue, 0) + jobs

    def queue_read(self, queue: str, received: bool, jobs: int) -> None:
        with self._lock:
            if received:
                self._idle.discard(queue)
            else:
                self._idle.add(queue)
            if jobs:
                self._streak[queue] = 0
