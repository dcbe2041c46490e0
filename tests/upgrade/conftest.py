"""Fixtures for running the previous release beside this one on the session's emulator."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sqsjobs.aws import SqsJobStore
from tests.aws.emulator import shared_endpoint, unique_prefix

from .previous import PREVIOUS_0_2, OldRelease, extract


@pytest.fixture(scope="session")
def aws_endpoint(pytestconfig: pytest.Config) -> str:
    return shared_endpoint(pytestconfig)


@pytest.fixture(scope="session")
def previous_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract(tmp_path_factory.mktemp("previous-release"))


@pytest.fixture(scope="session")
def old(previous_src: Path, aws_endpoint: str) -> OldRelease:
    return OldRelease(previous_src, aws_endpoint)


@pytest.fixture(scope="session")
def old_0_2(tmp_path_factory: pytest.TempPathFactory, aws_endpoint: str) -> OldRelease:
    """The release before this one, 0.2.0."""
    return OldRelease(extract(tmp_path_factory.mktemp("release-0.2"), PREVIOUS_0_2), aws_endpoint)


@dataclass
class Deployment:
    """A deployment the previous release made, upgraded in place (table index added)."""

    config: dict[str, Any]  # the old side's store configuration
    endpoint: str

    def store(self, **options: Any) -> SqsJobStore:
        """A store of this release on the same table and queues."""
        return SqsJobStore(
            table_name=self.config["table"],
            queue_urls=self.config["queues"],
            dead_letter_queue_urls=self.config["dlqs"],
            endpoint_url=self.endpoint,
            clock_skew=0.1,
            **{"wait_time": 1.0, **options},  # a stopping worker waits out its last poll
        )


@pytest.fixture
async def deployment(old: OldRelease, aws_endpoint: str) -> AsyncIterator[Deployment]:
    """Made by 0.1 (``create``), then upgraded as this release's ``create`` upgrades it."""
    prefix = unique_prefix()
    config = old.run("create", {"prefix": prefix})
    upgraded = SqsJobStore.create(
        prefix, max_receive_count=5, endpoint_url=aws_endpoint, clock_skew=0.1, record_format=1
    )
    assert upgraded.table_name == config["table"]
    await upgraded.aclose()
    yield Deployment(config, aws_endpoint)


@pytest.fixture
async def deployment_0_2(old_0_2: OldRelease, aws_endpoint: str) -> AsyncIterator[Deployment]:
    """Made by 0.2 (``create``: the ``by_queue`` index alone, record format 2)."""
    config = old_0_2.run("create", {"prefix": unique_prefix()})
    yield Deployment(config, aws_endpoint)
