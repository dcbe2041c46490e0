"""A dedicated emulator with the fault layer in front, one per test module.

Not the session's shared emulator: faults here hit every request, and a test turns them
on only around the part it wants faulty (``injector.faults(plan)``), after its setup.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from sqsjobs.aws import SqsJobStore
from sqsjobs.testing import local_aws
from tests.aws.emulator import ENVIRONMENT

from .faulty_aws import FaultInjector


@dataclass(frozen=True)
class FaultyAws:
    endpoint: str
    injector: FaultInjector


@pytest.fixture(scope="module")
def faulty_aws() -> Iterator[FaultyAws]:
    injector = FaultInjector()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in ENVIRONMENT.items():
            patch.setenv(name, value)
        with local_aws(counter=injector) as endpoint:
            yield FaultyAws(endpoint, injector)


@pytest.fixture
async def made(faulty_aws: FaultyAws) -> AsyncIterator[Callable[..., SqsJobStore]]:
    """Stores on one fresh set of resources, closed at the end."""
    base = SqsJobStore.create(f"sdk-{uuid.uuid4().hex[:8]}", endpoint_url=faulty_aws.endpoint)
    opened: list[SqsJobStore] = []

    def store(**options: Any) -> SqsJobStore:
        one = SqsJobStore(
            table_name=base.table_name,
            queue_urls=base.queue_urls,
            dead_letter_queue_urls=base.dead_letter_queue_urls,
            endpoint_url=faulty_aws.endpoint,
            **options,
        )
        opened.append(one)
        return one

    yield store
    for one in opened:
        await one.aclose()
    base.close()
