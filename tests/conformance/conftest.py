"""The ``harness`` fixture: every conformance test runs once per store kind.

A store joins the suite by adding a factory to ``FACTORIES``: an async context manager
that yields a ``Harness`` with a fresh, empty store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from sqsjobs import MemoryJobStore

from ..support.clock import FakeClock
from .harness import DEAD_RETENTION, QUEUES, RETENTION, Harness


@asynccontextmanager
async def memory_harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    clock = FakeClock()
    store = MemoryJobStore(clock=clock, retention=RETENTION, dead_retention=DEAD_RETENTION)
    yield Harness("memory", store, clock, clock.advance)


@asynccontextmanager
async def sqs_harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    """SqsJobStore on the session's AWS emulator, fresh resources per test, real time."""
    from sqsjobs.aws import SqsJobStore
    from tests.aws.emulator import shared_endpoint, unique_prefix

    # One process, one clock: no margin for clocks that disagree (the memory store has
    # none either); tests/aws/test_clock_skew.py covers it.
    store = SqsJobStore.create(
        unique_prefix(), queues=QUEUES, retention=RETENTION, dead_retention=DEAD_RETENTION,
        endpoint_url=shared_endpoint(request.config), clock_skew=0.0,
    )  # fmt: skip
    try:
        yield Harness("sqs", store, time.time, asyncio.sleep)
    finally:
        await store.aclose()


FACTORIES: dict[str, Callable[[pytest.FixtureRequest], AbstractAsyncContextManager[Harness]]] = {
    "memory": memory_harness,
    "sqs": sqs_harness,
}


@pytest.fixture(params=sorted(FACTORIES))
async def harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    async with FACTORIES[request.param](request) as made:
        yield made
