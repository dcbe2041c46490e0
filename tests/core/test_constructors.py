"""Constructor options are checked at construction, never later (SPEC §2.3, last paragraph)."""

from __future__ import annotations

import math
from collections.abc import Awaitable
from datetime import timedelta
from typing import Any

import pytest

from sqsjobs import Backoff, JobConfigError, JobQueue, MemoryJobStore, SyncJobQueue

QUEUES = [JobQueue, SyncJobQueue]
LEASE_RULE = "a finite number of seconds > 0 and <= 43200 (SQS's visibility cap)"
TIMEOUT_RULE = "a finite number of seconds >= 0 and <= 604800 (7 days)"


class CappedStore(MemoryJobStore):
    """A store whose records hold at most 1000 bytes of payload."""

    max_payload_bytes = 1000


@pytest.mark.parametrize("cls", QUEUES)
def test_queue_requires_a_store(cls: type[JobQueue | SyncJobQueue]) -> None:
    with pytest.raises(JobConfigError) as caught:
        cls(None)  # type: ignore[arg-type]
    assert caught.value.code == "store_required"
    assert "A job store is required: MemoryJobStore()" in str(caught.value)


@pytest.mark.parametrize("cls", QUEUES)
@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("payload_max_bytes", 0, "payload_max_bytes must be an int >= 1, got 0"),
        ("payload_max_bytes", -1, "payload_max_bytes must be an int >= 1, got -1"),
        ("payload_max_bytes", True, "payload_max_bytes must be an int >= 1, got True"),
        ("payload_max_bytes", 10.0, "payload_max_bytes must be an int >= 1, got 10.0"),
        ("default_max_attempts", 0, "default_max_attempts must be an int >= 1, got 0"),
        ("default_max_attempts", True, "default_max_attempts must be an int >= 1, got True"),
        ("default_timeout", -1, "default_timeout must be a finite number of seconds >= 0"),
        ("default_timeout", math.nan, "default_timeout must be a finite number of seconds >= 0"),
        ("default_timeout", math.inf, "default_timeout must be a finite number of seconds >= 0"),
        ("default_timeout", True, "default_timeout must be a finite number of seconds >= 0"),
        ("default_lease", 0, "default_lease must be a finite number of seconds > 0"),
        ("default_lease", -2.5, "default_lease must be a finite number of seconds > 0"),
        ("default_lease", math.inf, "default_lease must be a finite number of seconds > 0"),
        ("default_timeout", 604_800.5, f"default_timeout must be {TIMEOUT_RULE}, got 604800.5"),
        ("default_timeout", 1e300, f"default_timeout must be {TIMEOUT_RULE}, got 1e+300"),
        ("default_lease", 43_200.25, f"default_lease must be {LEASE_RULE}, got 43200.25"),
        ("default_lease", 1e300, f"default_lease must be {LEASE_RULE}, got 1e+300"),
        pytest.param("default_lease", 10**400, LEASE_RULE, id="default_lease-10**400"),
        ("default_lease", timedelta(seconds=30), f"default_lease must be {LEASE_RULE}, got"),
        ("backoff", {"base": 1}, "backoff must be a Backoff, got dict"),
    ],
)
def test_queue_options_out_of_range_raise_value_error(
    cls: type[JobQueue | SyncJobQueue], option: str, value: Any, message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        cls(MemoryJobStore(), **{option: value})
    assert type(caught.value) is ValueError
    assert message in str(caught.value)


@pytest.mark.parametrize("cls", QUEUES)
@pytest.mark.parametrize("default_queue", ["", "a b", "q\n", "x" * 65])
def test_queue_rejects_a_bad_default_queue_name(
    cls: type[JobQueue | SyncJobQueue], default_queue: str
) -> None:
    with pytest.raises(JobConfigError) as caught:
        cls(MemoryJobStore(), default_queue=default_queue)
    assert caught.value.code == "invalid_name"


@pytest.mark.parametrize("cls", QUEUES)
def test_payload_max_bytes_is_capped_by_the_stores_own_limit(
    cls: type[JobQueue | SyncJobQueue],
) -> None:
    assert cls(CappedStore(), payload_max_bytes=1000).payload_max_bytes == 1000
    with pytest.raises(ValueError) as caught:
        cls(CappedStore(), payload_max_bytes=1001)
    assert str(caught.value) == "payload_max_bytes must be <= 1000 for this store, got 1001"


@pytest.mark.parametrize("cls", QUEUES)
def test_queue_keeps_valid_options(cls: type[JobQueue | SyncJobQueue]) -> None:
    backoff = Backoff(base=1.0, max=2.0)
    queue = cls(
        MemoryJobStore(),
        default_queue="other",
        payload_max_bytes=10,
        default_timeout=0,
        default_lease=0.5,
        backoff=backoff,
        clock=lambda: 5.0,
    )
    assert (queue.default_queue, queue.payload_max_bytes, queue.backoff, queue.clock()) == (
        "other",
        10,
        backoff,
        5.0,
    )


@pytest.mark.parametrize("cls", QUEUES)
async def test_defaults_at_their_caps_are_kept(cls: type[JobQueue | SyncJobQueue]) -> None:
    queue = cls(MemoryJobStore(), default_lease=43_200, default_timeout=604_800.0)
    result = queue.enqueue("report.build", {"region": "eu-north-1"})
    job = (await result if isinstance(result, Awaitable) else result).job
    assert (job.lease, job.timeout) == (43_200.0, 604_800.0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"capacity": 0}, "capacity must be an int >= 1, got 0"),
        ({"capacity": -5}, "capacity must be an int >= 1, got -5"),
        ({"capacity": True}, "capacity must be an int >= 1, got True"),
        ({"capacity": 10.0}, "capacity must be an int >= 1, got 10.0"),
        ({"retention": -1}, "retention must be a finite number of seconds >= 0, got -1"),
        ({"retention": math.nan}, "retention must be a finite number of seconds >= 0, got nan"),
        ({"retention": True}, "retention must be a finite number of seconds >= 0, got True"),
        (
            {"dead_retention": -0.5},
            "dead_retention must be a finite number of seconds >= 0, got -0.5",
        ),
        (
            {"dead_retention": "1"},
            "dead_retention must be a finite number of seconds >= 0, got '1'",
        ),
    ],
)
def test_memory_store_options_out_of_range_raise_value_error(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        MemoryJobStore(**options)
    assert str(caught.value) == message


def test_memory_store_accepts_zero_retention_and_capacity_one() -> None:
    MemoryJobStore(capacity=1, retention=0, dead_retention=0)
