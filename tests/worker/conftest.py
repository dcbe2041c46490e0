"""Worker fixtures: a memory store and a queue on one fake clock, with jitter pinned to 1.0."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from sqsjobs import Backoff, JobQueue, MemoryJobStore

from ..support.clock import FakeClock


@dataclass
class Env:
    clock: FakeClock
    store: MemoryJobStore
    queue: JobQueue


@pytest.fixture
def env(clock: FakeClock) -> Env:
    store = MemoryJobStore(clock=clock)
    queue = JobQueue(store, clock=clock, backoff=Backoff(base=1.0, max=8.0, random=lambda: 1.0))
    return Env(clock, store, queue)
