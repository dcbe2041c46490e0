"""The command-line tests run against the session's AWS emulator, each on its own resources.

A command finds its store the way an operator's shell does: from the environment
(``SQSJOBS_TABLE``/``SQSJOBS_QUEUES`` plus ``AWS_ENDPOINT_URL``) or from a deployed stack
(``--stack``). ``cli_env`` is that environment for one fresh store; ``invoke`` runs a
command in process through click's runner.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from click.testing import CliRunner, Result

from sqsjobs.aws import SqsJobStore
from sqsjobs.cli import main
from tests.aws.emulator import shared_endpoint, unique_prefix

# Plain, wide, uncoloured output whatever the terminal running the tests.
PLAIN = {"COLUMNS": "160", "NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None}
Env = dict[str, str | None]


@pytest.fixture(scope="session")
def aws_endpoint(pytestconfig: pytest.Config) -> str:
    return shared_endpoint(pytestconfig)


@pytest.fixture
def store(aws_endpoint: str) -> Iterator[SqsJobStore]:
    made = SqsJobStore.create(unique_prefix(), endpoint_url=aws_endpoint, wait_time=1.0)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def cli_env(store: SqsJobStore, aws_endpoint: str) -> Env:
    """The environment that names ``store`` for the command line."""
    return {
        **PLAIN,
        "SQSJOBS_STACK": None,
        "SQSJOBS_TABLE": store.table_name,
        "SQSJOBS_QUEUES": ",".join(f"{q}={url}" for q, url in store.queue_urls.items()),
        "AWS_ENDPOINT_URL": aws_endpoint,
        # Short long polls: a stopping worker waits out its last one (``--wait-time``).
        "SQSJOBS_WAIT_TIME": "1",
    }


def invoke(env: Env, *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def wait_until(condition: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or condition}")
        time.sleep(0.1)
