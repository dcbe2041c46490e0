"""The deploy tests use the session's one AWS emulator (``tests.aws.emulator``).

Tests isolate themselves by unique stack names, never by restarting the emulator.
"""

from __future__ import annotations

import uuid

import pytest

from tests.aws.emulator import shared_endpoint


@pytest.fixture(scope="session")
def aws_endpoint(pytestconfig: pytest.Config) -> str:
    return shared_endpoint(pytestconfig)


@pytest.fixture
def stack_name() -> str:
    return f"t{uuid.uuid4().hex[:12]}"
