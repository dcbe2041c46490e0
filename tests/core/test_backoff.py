"""Retry delays: full jitter under an exponential ceiling, with the random source injected."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqsjobs import Backoff, compute_backoff


def ceiling() -> float:
    return 1.0


@pytest.mark.parametrize(
    ("attempt", "expected"),
    [
        (-3, 0.2),
        (0, 0.2),
        (1, 0.2),
        (2, 0.4),
        (3, 0.8),
        (4, 1.6),
        (8, 25.6),
        (9, 51.2),
        (10, 60.0),
        (50, 60.0),
    ],
)
def test_ceiling_doubles_per_attempt_up_to_max(attempt: int, expected: float) -> None:
    assert compute_backoff(attempt, 0.2, 60.0, ceiling) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("draw", "expected"), [(0.0, 0.0), (0.25, 1.0), (0.5, 2.0)])
def test_delay_is_the_random_draw_times_the_ceiling(draw: float, expected: float) -> None:
    assert compute_backoff(3, 1.0, 60.0, lambda: draw) == expected


def test_random_is_drawn_once_per_delay() -> None:
    draws = iter([0.5, 0.25])
    assert [compute_backoff(2, 1.0, 8.0, lambda: next(draws)) for _ in range(2)] == [1.0, 0.5]


@pytest.mark.parametrize("attempt", [1024, 1025, 10_000, 10**9])
def test_huge_attempt_numbers_stay_at_max(attempt: int) -> None:
    assert compute_backoff(attempt, 0.2, 60.0, ceiling) == 60.0


def test_zero_base_never_waits() -> None:
    assert compute_backoff(10_000, 0.0, 60.0, ceiling) == 0.0


@given(
    attempt=st.integers(min_value=-5, max_value=5000),
    base=st.floats(min_value=0, max_value=100),
    spread=st.floats(min_value=0, max_value=1000),
    draw=st.floats(min_value=0, max_value=1, exclude_max=True),
)
def test_full_jitter_stays_between_zero_and_the_ceiling(
    attempt: int, base: float, spread: float, draw: float
) -> None:
    maximum = base + spread
    delay = compute_backoff(attempt, base, maximum, lambda: draw)
    bound = min(maximum, base * 2.0 ** min(max(0, attempt - 1), 1023))
    assert 0.0 <= delay <= bound


def test_backoff_delay_uses_its_injected_random() -> None:
    assert Backoff(base=0.5, max=10.0, random=lambda: 0.5).delay(3) == 1.0


def test_backoff_defaults() -> None:
    backoff = Backoff()
    assert (backoff.base, backoff.max) == (0.2, 60.0)
    assert 0.0 <= backoff.delay(1) <= 0.2


def test_backoffs_with_different_random_sources_compare_equal() -> None:
    assert Backoff(random=lambda: 0.1) == Backoff(random=lambda: 0.9)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"base": -0.1}, "Backoff base must be a finite number of seconds >= 0, got -0.1"),
        ({"base": math.nan}, "Backoff base must be a finite number of seconds >= 0, got nan"),
        ({"base": math.inf}, "Backoff base must be a finite number of seconds >= 0, got inf"),
        (
            {"base": 2.0, "max": 1.0},
            "Backoff max must be a finite number of seconds >= 2 (the base), got 1.0",
        ),
        (
            {"max": math.inf},
            "Backoff max must be a finite number of seconds >= 0.2 (the base), got inf",
        ),
        (
            {"max": math.nan},
            "Backoff max must be a finite number of seconds >= 0.2 (the base), got nan",
        ),
    ],
)
def test_backoff_rejects_bad_bounds(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        Backoff(**options)
    assert str(caught.value) == message


def test_backoff_accepts_equal_base_and_max() -> None:
    assert Backoff(base=0.0, max=0.0).delay(5) == 0.0
