"""One AWS emulator per test session, shared by tests/aws and the conformance suite.

Tests isolate themselves by unique resource names (``unique_prefix``), never by
restarting the server; dummy credentials keep boto3 away from any real account.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import pytest

from sqsjobs.testing import RequestCounter, RequestCounts, local_aws
from sqsjobs.testing.meter import BillingMeter
from sqsjobs.testing.wsgi import WsgiApp

ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


class ArrivalCounter(RequestCounter):
    """Counts what the emulator serves and wakes whoever waits for a request to arrive, so
    a test can wait for a long poll to reach the emulator instead of sleeping."""

    def __init__(self) -> None:
        super().__init__()
        self._arrived = threading.Condition()

    def wrap(self, app: WsgiApp) -> WsgiApp:
        def arrived(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            with self._arrived:  # counted already, not yet served
                self._arrived.notify_all()
            return app(environ, start_response)

        return super().wrap(arrived)

    def wait_until(self, predicate: Callable[[RequestCounts], bool], timeout: float) -> None:
        with self._arrived:
            if not self._arrived.wait_for(lambda: predicate(self.counts()), timeout):
                raise AssertionError(f"no request arrived within {timeout}s")


COUNTER = ArrivalCounter()
# Reads item images only inside a ``METER.record()`` block, so other tests pay nothing.
METER = BillingMeter()


class _Emulator:
    def __init__(self) -> None:
        self.url: str | None = None
        self._stack = ExitStack()

    def start(self, config: pytest.Config) -> str:
        if self.url is None:
            saved = {name: os.environ.get(name) for name in ENVIRONMENT}
            os.environ.update(ENVIRONMENT)
            self._stack.callback(_restore, saved)
            self.url = self._stack.enter_context(local_aws(counter=COUNTER, meter=METER))
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
