"""One rule for every numeric option: bool, NaN, infinities, negatives and other types are
refused with the error its kind calls for, and a realistic value is kept.

Constructor options (and ``stop(grace)``) raise a plain ``ValueError`` (SPEC §2.3, last
paragraph); per-call options raise ``JobConfigError("invalid_option")``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from sqsjobs import (
    Backoff,
    EnqueueRequest,
    JobConfigError,
    JobQueue,
    JobWorker,
    MemoryJobStore,
    SyncJobQueue,
)
from sqsjobs.contrib.asgi import JobsLifespan
from sqsjobs.producer.enqueue import list_filter, prepare

from ..support.config import NOW, make_config

SECONDS_REFUSED = [True, False, math.nan, math.inf, -math.inf, -1, -0.25, "1.5", None, [1]]
INT_REFUSED = [True, False, math.nan, math.inf, -math.inf, -1, 2.0, "3", None, [1]]


async def send_welcome(payload: dict[str, Any]) -> None:
    """A handler for the worker's registry; never called here."""


def worker(**options: Any) -> JobWorker:
    return JobWorker(JobQueue(MemoryJobStore()), {"email.send": send_welcome}, **options)


def stop_worker(grace: Any) -> None:
    async def stop() -> None:
        await worker().stop(grace)

    asyncio.run(stop())


async def app(scope: Any, receive: Any, send: Any) -> None:
    """An ASGI app for the lifespan middleware; never called here."""


def lifespan_grace(value: Any) -> JobsLifespan:
    return JobsLifespan(app, JobQueue(MemoryJobStore()), grace=value)


def backoff_max(value: Any) -> Backoff:
    return Backoff(base=0.0, max=value)


@dataclass(frozen=True)
class Option:
    """A constructor option: how to set it, a value it keeps, and whether it is an int."""

    name: str
    build: Callable[[Any], object]
    good: Any
    whole: bool = False

    @property
    def refused(self) -> list[Any]:
        return INT_REFUSED if self.whole else SECONDS_REFUSED


def option(owner: Callable[..., object], name: str, good: Any, whole: bool = False) -> Option:
    """``owner(**{name: value})``, the owner's other arguments left at their defaults."""
    needs_store = owner in (JobQueue, SyncJobQueue)

    def build(value: Any) -> object:
        if needs_store:
            return owner(MemoryJobStore(), **{name: value})
        return owner(**{name: value})

    return Option(f"{getattr(owner, '__name__', owner)}.{name}", build, good, whole)


CONSTRUCTOR_OPTIONS = [
    *(
        option(queue, name, good, whole)
        for queue in (JobQueue, SyncJobQueue)
        for name, good, whole in [
            ("payload_max_bytes", 48_213, True),
            ("default_max_attempts", 7, True),
            ("default_timeout", 29.8731, False),
            ("default_lease", 45.0625, False),
        ]
    ),
    option(MemoryJobStore, "capacity", 25_000, whole=True),
    option(MemoryJobStore, "retention", 3_600.5),
    option(MemoryJobStore, "dead_retention", 1_209_600.25),
    option(worker, "concurrency", 12, whole=True),
    option(worker, "poll_interval", 0.137),
    option(Backoff, "base", 0.35),
    Option("Backoff.max", backoff_max, 90.5),
    Option("JobWorker.stop.grace", stop_worker, 2.75),
    Option("JobsLifespan.grace", lifespan_grace, 4.5),
]


@pytest.mark.parametrize(
    ("option", "value"),
    [(option, value) for option in CONSTRUCTOR_OPTIONS for value in option.refused],
    ids=lambda item: item.name if isinstance(item, Option) else repr(item),
)
def test_a_constructor_option_refuses_anything_but_its_kind_of_number(
    option: Option, value: Any
) -> None:
    with pytest.raises(ValueError) as caught:
        option.build(value)
    assert type(caught.value) is ValueError
    message = str(caught.value)
    assert option.name.rpartition(".")[2] in message
    assert " must be " in message and repr(value) in message


@pytest.mark.parametrize("option", CONSTRUCTOR_OPTIONS, ids=lambda option: option.name)
def test_a_constructor_option_keeps_a_realistic_value(option: Option) -> None:
    option.build(option.good)


def test_retention_caps_are_finite_however_large() -> None:
    with pytest.raises(ValueError, match="retention must be a finite number of seconds >= 0"):
        MemoryJobStore(retention=10**400)
    MemoryJobStore(retention=10**300, dead_retention=1e300)


PER_CALL_SECONDS = ["delay", "timeout", "lease"]


@pytest.mark.parametrize("value", [*SECONDS_REFUSED[:-2], [1.5]])
@pytest.mark.parametrize("name", PER_CALL_SECONDS)
def test_a_per_call_duration_refuses_anything_but_seconds(name: str, value: Any) -> None:
    with pytest.raises(JobConfigError) as caught:
        prepare(make_config(), EnqueueRequest("email.send", None, **{name: value}), NOW)
    assert caught.value.code == "invalid_option"
    assert str(caught.value).startswith(f"Invalid {name} {value!r}: must be a finite number")


@pytest.mark.parametrize("name", PER_CALL_SECONDS)
def test_a_per_call_duration_also_takes_a_timedelta(name: str) -> None:
    request = EnqueueRequest("email.send", None, **{name: timedelta(seconds=12, microseconds=5)})
    job = prepare(make_config(), request, NOW).job
    assert name == "delay" or getattr(job, name) == 12.000005


@pytest.mark.parametrize(
    ("name", "value"),
    [("max_attempts", value) for value in INT_REFUSED if value is not None]
    + [("priority", value) for value in INT_REFUSED if value not in (-1, None)],
)
def test_a_per_call_count_refuses_anything_but_an_int(name: str, value: Any) -> None:
    with pytest.raises(JobConfigError) as caught:
        prepare(make_config(), EnqueueRequest("email.send", None, **{name: value}), NOW)
    assert caught.value.code == "invalid_option"
    assert str(caught.value).startswith(f"Invalid {name} {value!r}: must be an int")


@pytest.mark.parametrize("value", INT_REFUSED)
def test_a_page_limit_refuses_anything_but_an_int(value: Any) -> None:
    with pytest.raises(JobConfigError) as caught:
        list_filter(queue=None, status=None, name=None, tenant=None, limit=value)
    assert caught.value.code == "invalid_option"
    assert str(caught.value) == f"Invalid limit {value!r}: must be an int from 1 to 1000"
