"""A clock that moves only when told to, starting where a real one could read.

Fake clocks start at ``REALISTIC_START``: a value that reads like ``time.time()``, with
digits below the microsecond that a datetime cannot keep (it comes back from one as
...741.24397). Round starting points once hid a bug that about three in four real clock
readings trigger.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

REALISTIC_START = 1_796_094_741.2439704


def beyond_microseconds(near: float) -> float:
    """The first instant from ``near`` on that does not survive a trip through a datetime."""
    moment = near
    while datetime.fromtimestamp(moment, UTC).timestamp() == moment:
        moment = math.nextafter(moment, math.inf)
    return moment


class FakeClock:
    """Epoch seconds that move only when told to, starting at a realistic reading."""

    def __init__(self, start: float = REALISTIC_START) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class AheadClock:
    """The real clock plus an offset the test moves forward.

    For a store that also talks to real SQS timers: what a test judges on the store's
    clock (a reconciler's ``grace``, a producer's ``resend_after``) moves only when the
    test says, so a loaded machine's pause between two calls cannot age a record.
    """

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset
