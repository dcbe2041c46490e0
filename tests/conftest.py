"""Fixtures every suite may use; the helpers behind them live in ``tests/support``."""

from __future__ import annotations

import pytest

from tests.support.clock import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    """A fake clock at a realistic reading, moved only by ``clock.advance(seconds)``."""
    return FakeClock()
