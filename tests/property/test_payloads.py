"""Every payload validation accepts round-trips unchanged; every one it refuses says why."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sqsjobs import JobConfigError, JobFilter, JobQueue, MemoryJobStore

from .strategies import json_values, with_one_bad_leaf


def same_json(a: Any, b: Any) -> bool:
    """Equal, and of the same JSON types all the way down (1 is not 1.0, True is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


@settings(max_examples=200, deadline=None)
@given(payload=json_values)
def test_accepted_payloads_round_trip_through_the_memory_store(payload: Any) -> None:
    async def round_trip() -> Any:
        queue = JobQueue(MemoryJobStore(), payload_max_bytes=1 << 20)
        job = (await queue.enqueue("a", payload)).job
        stored = await queue.get(job.id)
        assert stored is not None
        return stored.payload

    assert same_json(asyncio.run(round_trip()), json.loads(json.dumps(payload)))


@settings(max_examples=200, deadline=None)
@given(payload=with_one_bad_leaf())
def test_refused_payloads_raise_invalid_payload_and_write_nothing(payload: Any) -> None:
    store = MemoryJobStore()

    async def attempt() -> JobConfigError:
        try:
            await JobQueue(store).enqueue("a", payload)
        except JobConfigError as error:
            return error
        raise AssertionError("accepted a payload that is not JSON")

    error = asyncio.run(attempt())
    assert error.code == "invalid_payload"
    assert "Allowed:" in str(error)
    assert asyncio.run(store.list(JobFilter(), 10, None, 0.0)).jobs == []


@given(size=st.integers(1, 300), limit=st.integers(10, 400))
def test_the_size_cap_counts_utf8_bytes(size: int, limit: int) -> None:
    payload = "é" * size  # two bytes each, plus two for the quotes
    queue = JobQueue(MemoryJobStore(), payload_max_bytes=limit)
    try:
        asyncio.run(queue.enqueue("a", payload))
        accepted = True
    except JobConfigError as error:
        assert error.code == "payload_too_large"
        accepted = False
    assert accepted is (2 * size + 2 <= limit)
