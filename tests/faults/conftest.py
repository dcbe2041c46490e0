"""A dedicated emulator with the fault layer in front, one per test module.

Not the session's shared emulator: faults here hit every request, and a test turns them
on only around the part it wants faulty (``injector.faults(plan)``), after its setup.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

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
