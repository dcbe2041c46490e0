"""The ``harness`` fixture: every conformance test runs once per store kind.

A store joins the suite by adding a factory to ``FACTORIES``: an async context manager
that yields a ``Harness`` with a fresh, empty store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from sqsjobs import MemoryJobStore

from .harness import DEAD_RETENTION, RETENTION, FakeClock, Harness


@asynccontextmanager
async def memory_harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    clock = FakeClock()
    store = MemoryJobStore(clock=clock, retention=RETENTION, dead_retention=DEAD_RETENTION)
    yield Harness("memory", store, clock, clock.advance)


FACTORIES: dict[str, Callable[[pytest.FixtureRequest], AbstractAsyncContextManager[Harness]]] = {
    "memory": memory_harness
}


@pytest.fixture(params=sorted(FACTORIES))
async def harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    async with FACTORIES[request.param](request) as made:
        yield made
