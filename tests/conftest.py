"""Fixtures every suite may use; the helpers behind them live in ``tests/support``."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from tests.support.clock import FakeClock

WATCHED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as the tests send it, however the suite was started.

    A shell starts a background job with SIGINT ignored, and an ignored signal stays
    ignored in every process started after it: the tests' SIGINT to a command (or to this
    process) would then do nothing. A handler of our own instead is reset to the default
    in each child, which Python turns into ``KeyboardInterrupt`` again.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def clock() -> FakeClock:
    """A fake clock at a realistic reading, moved only by ``clock.advance(seconds)``."""
    return FakeClock()


@pytest.fixture(autouse=True)
def signal_handlers_kept() -> Iterator[None]:
    """A test leaves the process's SIGINT and SIGTERM handlers as it found them.

    A handler left behind (ignored, or replaced) changes every later test on the same
    worker process, and the processes they start inherit an ignored signal: a Ctrl-C test
    of a command then waits out its timeout, on whichever worker the order put it.
    """
    before = {signum: signal.getsignal(signum) for signum in WATCHED_SIGNALS}
    yield
    after = {signum: signal.getsignal(signum) for signum in WATCHED_SIGNALS}
    changed = {
        signal.Signals(s).name: (before[s], after[s]) for s in before if before[s] != after[s]
    }
    for signum, handler in before.items():
        signal.signal(signum, handler)
    assert not changed, f"the test left signal handlers changed: {changed}"
