"""The README's world: the session's emulator with the stacks the README deploys.

The README deploys ``app`` (``sqsjobs infra deploy --stack app``) and ``app-reports``, a
second queue ``reports`` on its table (its CloudFormation section); its blocks name them
as written, so they are deployed under those names, once per test process (each process
has an emulator of its own, ``tests.aws.emulator``). Sessions tell their jobs apart by
when they were made (``Session.jobs``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from sqsjobs.infra import deploy_stack
from tests.aws.emulator import shared_endpoint

from .session import Session, environment


@pytest.fixture(scope="session")
def readme_stacks(pytestconfig: pytest.Config) -> dict[str, str]:
    """``app`` and ``app-reports`` deployed; their store as ``SqsJobStore.from_env`` reads it."""
    endpoint = shared_endpoint(pytestconfig)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # resources the emulator does not model
        app = deploy_stack("app", endpoint_url=endpoint)
        reports = deploy_stack(
            "app-reports",
            template="sqsjobs-queue",
            parameters={"QueueName": "reports", "TableName": app["TableName"]},
            endpoint_url=endpoint,
        )
    joined = {
        name: f"{app[output]},{reports[output]}"
        for name, output in (
            ("SQSJOBS_QUEUES", "QueueUrls"),
            ("SQSJOBS_DEAD_LETTER_QUEUES", "DeadLetterQueueUrls"),
            ("SQSJOBS_PRIORITY_LANES", "PriorityLaneUrls"),
        )
    }
    return {"AWS_ENDPOINT_URL": endpoint, "SQSJOBS_TABLE": app["TableName"], **joined}


@pytest.fixture
def session(readme_stacks: dict[str, str], tmp_path: Path) -> Iterator[Callable[[], Session]]:
    """Makes the sessions of one test, each in a directory of its own; ends them all."""
    with ExitStack() as stack:

        def make() -> Session:
            directory = tmp_path / f"session-{len(list(tmp_path.iterdir()))}"
            directory.mkdir()
            env = environment(readme_stacks["AWS_ENDPOINT_URL"], readme_stacks, directory)
            return stack.enter_context(Session(directory, env))

        yield make
