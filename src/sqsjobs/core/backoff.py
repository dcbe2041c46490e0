"""Retry delays: exponential growth with full jitter, so failed jobs do not retry in lockstep."""

from __future__ import annotations

import builtins
import random as _random
from collections.abc import Callable
from dataclasses import dataclass, field

from .validation import Span, seconds


@dataclass(frozen=True)
class Backoff:
    """Delay policy for retries, in seconds: ``random() * min(max, base * 2 ** (attempt - 1))``.

    ``random`` is injectable so tests can pin the jitter (``lambda: 1.0`` is the ceiling).
    """

    base: float = 0.2
    max: float = 60.0
    random: Callable[[], float] = field(default=_random.random, compare=False)

    def __post_init__(self) -> None:
        seconds(self.base, "Backoff base", code=None)
        seconds(self.max, "Backoff max", Span(minimum=self.base, why="the base"), code=None)

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based), jittered."""
        return compute_backoff(attempt, self.base, self.max, self.random)


def compute_backoff(attempt: int, base: float, max: float, random: Callable[[], float]) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based), full jitter."""
    # A float power: 2 ** 1024 as an int cannot be multiplied by a float (OverflowError);
    # the exponent is capped where the float is still finite, and min() caps the rest.
    ceiling = min(max, base * 2.0 ** builtins.min(builtins.max(0, attempt - 1), 1023))
    return float(random() * ceiling)
