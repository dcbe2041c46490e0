"""The chaos test runs on the session's AWS emulator, like tests/aws and tests/cli."""

from __future__ import annotations

import pytest

from tests.aws.emulator import shared_endpoint


@pytest.fixture(scope="session")
def aws_endpoint(pytestconfig: pytest.Config) -> str:
    return shared_endpoint(pytestconfig)
