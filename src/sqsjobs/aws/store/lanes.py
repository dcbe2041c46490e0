"""Which of a queue's SQS queues a worker's next claim reads: its lanes, or the queue.

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

QUIET_FIRST = 1.0
QUIET_MOST = 8.0
RECEIVES_FIRST = 16
RECEIVES_MOST = 64
SHARE = 10


class _Quiet:
    __slots__ = ("after", "backoff", "receives", "until")

    def __init__(self) -> None:
        self.until = 0.0  # not before this instant (monotonic)
        self.after = 0  # nor before the queue's receive count reaches this
        self.backoff = 0.0
        self.receives = 0


class LanePicker:
    """Per queue and lane, what the last receives found; shared by a store's claims."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: set[str] = set()
        self._streak: dict[str, int] = {}
        self._quiet: dict[str, _Quiet] = {}
        self._receives: dict[str, int] = {}  # per queue: receives that found messages

    def lanes_worth_reading(self, queue: str) -> bool:
        """Not while the queue is idle: its long poll wakes for every job, lanes' too."""
        with self._lock:
            return queue not in self._idle

    def queue_first(self, queue: str) -> bool:
        """The starvation guard: the queue's turn after ``SHARE - 1`` jobs from lanes."""
        with self._lock:
            return self._streak.get(queue, 0) >= SHARE - 1

    def quiet(self, queue: str, lane: str, now: float) -> bool:
        with self._lock:
            found = self._quiet.get(lane)
            if found is None:
                return False
            return now < found.until or self._receives.get(queue, 0) < found.after

    def lane_read(self, queue: str, lane: str, received: bool, jobs: int, now: float) -> None:
        with self._lock:
            quiet = self._quiet.setdefault(lane, _Quiet())
            if received:
                quiet.backoff, quiet.receives, quiet.until, quiet.after = 0.0, 0, 0.0, 0
            else:
                quiet.backoff = min(QUIET_MOST, max(QUIET_FIRST, quiet.backoff * 2))
                quiet.receives = min(RECEIVES_MOST, max(RECEIVES_FIRST, quiet.receives * 2))
                quiet.until = now + quiet.backoff
                quiet.after = self._receives.get(queue, 0) + quiet.receives
            if jobs:
                self._streak[queue] = self._streak.get(queue, 0) + jobs

    def queue_received(self, queue: str) -> None:
        """A receive request on the queue itself brought messages (held ones do not count)."""
        with self._lock:
            self._receives[queue] = self._receives.get(queue, 0) + 1

    def queue_read(self, queue: str, received: bool, jobs: int) -> None:
        with self._lock:
            if received:
                self._idle.discard(queue)
            else:
                self._idle.add(queue)
            if jobs:
                self._streak[queue] = 0
