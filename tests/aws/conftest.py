"""Fixtures for the AWS store tests: the shared emulator and a fresh store per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sqsjobs.aws import SqsJobStore

from .emulator import shared_endpoint, unique_prefix

QUEUES = ("default", "other")


@pytest.fixture(scope="session")
def aws_endpoint(pytestconfig: pytest.Config) -> str:
    return shared_endpoint(pytestconfig)


@pytest.fixture
def prefix() -> str:
    return unique_prefix()


@pytest.fixture
async def store(aws_endpoint: str, prefix: str) -> AsyncIterator[SqsJobStore]:
    made = SqsJobStore.create(prefix, queues=QUEUES, max_receive_count=5, endpoint_url=aws_endpoint)
    try:
        yield made
    finally:
        await made.aclose()
