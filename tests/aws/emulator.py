"""One AWS emulator per test session, shared by tests/aws and the conformance suite.

Tests isolate themselves by unique resource names (``unique_prefix``), never by
restarting the server; dummy credentials keep boto3 away from any real account.
"""

from __future__ import annotations

import os
import uuid
from contextlib import ExitStack

import pytest

from sqsjobs.testing import RequestCounter, local_aws

ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}
COUNTER = RequestCounter()


class _Emulator:
    def __init__(self) -> None:
        self.url: str | None = None
        self._stack = ExitStack()

    def start(self, config: pytest.Config) -> str:
        if self.url is None:
            saved = {name: os.environ.get(name) for name in ENVIRONMENT}
            os.environ.update(ENVIRONMENT)
            self._stack.callback(_restore, saved)
            self.url = self._stack.enter_context(local_aws(counter=COUNTER))
            config.add_cleanup(self.stop)
        return self.url

    def stop(self) -> None:
        self.url = None
        self._stack.close()


def _restore(saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


EMULATOR = _Emulator()


def shared_endpoint(config: pytest.Config) -> str:
    """The session's emulator endpoint, started on first use and stopped at session end."""
    return EMULATOR.start(config)


def unique_prefix() -> str:
    return f"t{uuid.uuid4().hex[:12]}"
