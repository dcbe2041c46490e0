"""The ``harness`` fixture: every conformance test runs once per store kind.

A store joins the suite by adding a factory to ``FACTORIES``: an async context manager
that yields a ``Harness`` with a fresh, empty store. Tests marked ``BOTH_FACES`` run once
per store kind and face (``face``: async, or the producer operations through ``sync``).
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

RECEIVES = ("sqs", "ReceiveMessage")


@asynccontextmanager
async def memory_harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    clock = FakeClock()
    store = MemoryJobStore(clock=clock, retention=RETENTION, dead_retention=DEAD_RETENTION)
    yield Harness("memory", store, clock, clock.advance, next_turn)


@asynccontextmanager
async def next_turn() -> AsyncIterator[None]:
    """A memory store's claim waits as soon as its task first runs: one turn of the loop."""
    yield
    await asyncio.sleep(0)


@asynccontextmanager
async def a_receive_arrives() -> AsyncIterator[None]:
    """An SQS claim waits once its ReceiveMessage long poll has reached the emulator."""
    from tests.aws.emulator import COUNTER

    before = COUNTER.counts().requests[RECEIVES]
    yield
    await asyncio.to_thread(COUNTER.wait_until, lambda now: now.requests[RECEIVES] > before, 10)


@asynccontextmanager
async def sqs_harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    """SqsJobStore on the session's AWS emulator, fresh resources per test, real time."""
    async with sqs_store_harness(request, lean=False) as made:
        yield made


@asynccontextmanager
async def sqs_lean_harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    """The same, with the worker's hot calls on the lean path (``lean=True``)."""
    async with sqs_store_harness(request, lean=True) as made:
        yield made


@asynccontextmanager
async def sqs_store_harness(
    request: pytest.FixtureRequest, *, lean: bool
) -> AsyncIterator[Harness]:
    from sqsjobs.aws import SqsJobStore
    from tests.aws.emulator import shared_endpoint, unique_prefix

    # One process, one clock: no margin for clocks that disagree (the memory store has
    # none either); tests/aws/test_clock_skew.py covers it.
    store = SqsJobStore.create(
        unique_prefix(),
        queues=QUEUES,
        retention=RETENTION,
        dead_retention=DEAD_RETENTION,
        endpoint_url=shared_endpoint(request.config),
        clock_skew=0.0,
        lean=lean,
    )
    try:
        yield Harness("sqs", store, time.time, asyncio.sleep, a_receive_arrives)
    finally:
        await store.aclose()


FACTORIES: dict[str, Callable[[pytest.FixtureRequest], AbstractAsyncContextManager[Harness]]] = {
    "memory": memory_harness,
    "sqs": sqs_harness,
    "sqs-lean": sqs_lean_harness,  # the whole suite again on the opt-in: CI's --all only
}


@pytest.fixture
def face(request: pytest.FixtureRequest) -> str:
    """The face the producer operations use: async unless the test is marked ``BOTH_FACES``."""
    return getattr(request, "param", "async")


@pytest.fixture(
    params=[
        pytest.param(kind, marks=pytest.mark.slow) if kind == "sqs-lean" else kind
        for kind in sorted(FACTORIES)
    ]
)
async def harness(request: pytest.FixtureRequest, face: str) -> AsyncIterator[Harness]:
    async with FACTORIES[request.param](request) as made:
        yield made if face == "async" else made.through_blocking_face()
