"""A producer pointed where nothing listens fails within a second or two, naming where.

botocore's standard retry mode spent five attempts, with backoff of up to 1, 2, 4 and 8 s,
on a connection refused outright: 9 to 18 s before ``enqueue`` said anything. A
connection that could not be made now gets one retry (``transports.unreachable``); every
other failure keeps the retry mode's full budget, and a caller's own ``Config(retries=)``
keeps theirs. The endpoints are real closed loopback ports, so each call is refused at once.
"""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from sqsjobs import JobQueue, JobStoreError, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.transports.aio import AioTransport
from sqsjobs.aws.transports.boto import BotoTransport
from sqsjobs.aws.transports.endpoint import Endpoint
from sqsjobs.aws.transports.unreachable import CONNECT_ATTEMPTS, UnreachableRetries
from sqsjobs.aws.wire.protocol import AwsError, Call

# Generous for a busy 2-core machine: two refused connects and one backoff of at most 1 s
# (plus building the client); the retry mode's budget took 9 to 18 s.
BOUND = 5.0
INVOICE = {"número": "F-2026/001", "cliente": "Müller GmbH", "total": "1.234,50 €"}


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy credentials and a region: a request is signed before it is sent."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "eu-west-1",
    }.items():
        monkeypatch.setenv(name, value)


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def dead_store(endpoint: str, **options: Any) -> SqsJobStore:
    return SqsJobStore(
        table_name="jobs",
        queue_urls={"default": f"{endpoint}/000000000000/jobs"},
        endpoint_url=endpoint,
        **options,
    )


def test_a_sync_producer_fails_fast_naming_the_endpoint() -> None:
    endpoint = closed_port()
    store = dead_store(endpoint)
    started = time.monotonic()
    with pytest.raises(JobStoreError) as failed:
        SyncJobQueue(store).enqueue("invoices.send", INVOICE)
    elapsed = time.monotonic() - started
    store.close()
    assert elapsed < BOUND, f"took {elapsed:.2f}s"
    assert endpoint in str(failed.value)
    assert str(failed.value).startswith("PutItem: EndpointConnectionError: ")


async def test_an_async_producer_fails_fast_naming_the_endpoint() -> None:
    endpoint = closed_port()
    store = dead_store(endpoint, connect_timeout=2)
    try:
        started = time.monotonic()
        with pytest.raises(JobStoreError) as failed:
            await JobQueue(store).enqueue("invoices.send", INVOICE)
        elapsed = time.monotonic() - started
    finally:
        await store.aclose()
    assert elapsed < BOUND, f"took {elapsed:.2f}s"
    assert endpoint in str(failed.value)


def attempts_made(endpoint: Endpoint) -> int:
    """How many times a refused ``GetItem`` was sent before the transport gave up."""
    transport = BotoTransport(endpoint)
    sent: list[str] = []
    client = transport.client("dynamodb")
    client.meta.events.register("before-send.dynamodb", lambda **_: sent.append("sent"))
    try:
        with pytest.raises(AwsError) as failed:
            transport(Call("dynamodb", "get_item", {"TableName": "jobs", "Key": {}}))
    finally:
        transport.close()
    assert failed.value.code == "EndpointConnectionError"
    return len(sent)


def test_a_refused_connection_is_tried_twice_and_a_callers_retry_config_is_kept() -> None:
    assert attempts_made(Endpoint(closed_port(), "eu-west-1")) == CONNECT_ATTEMPTS == 2
    theirs = Config(retries={"mode": "standard", "total_max_attempts": 3})
    assert attempts_made(Endpoint(closed_port(), "eu-west-1", config=theirs)) == 3
    assert attempts_made(Endpoint(closed_port(), "eu-west-1", max_attempts=1)) == 1


async def test_the_asyncio_transport_tries_a_refused_connection_twice_too() -> None:
    transport = AioTransport(Endpoint(closed_port(), "eu-west-1"))
    sent: list[str] = []
    client = await transport.client("dynamodb")
    client.meta.events.register("before-send.dynamodb", lambda **_: sent.append("sent"))
    try:
        with pytest.raises(AwsError) as failed:
            await transport(Call("dynamodb", "get_item", {"TableName": "jobs", "Key": {}}))
    finally:
        await transport.aclose()
    assert (failed.value.code, len(sent)) == ("EndpointConnectionError", CONNECT_ATTEMPTS)


async def test_the_lean_path_ends_a_refused_call_as_the_sdk_does() -> None:
    transport = AioTransport(Endpoint(closed_port(), "eu-west-1", lean=True))
    asked: list[int] = []  # the attempts ``needs-retry`` was emitted for
    client = await transport.client("dynamodb")
    client.meta.events.register(
        "needs-retry.dynamodb", lambda attempts, **_: asked.append(attempts)
    )
    call = Call("dynamodb", "update_item", {"TableName": "jobs", "Key": {"pk": {"S": "job#1"}}})
    try:
        for _ in range(2):  # the SDK's pipeline (its route is noted on the way out), then lean
            with pytest.raises(AwsError) as failed:
                await transport(call)
            assert failed.value.code == "EndpointConnectionError"
        _, lean = await transport._opened("dynamodb")
        assert lean is not None and "update_item" in lean._routes
    finally:
        await transport.aclose()
    assert asked == [1, 1]  # each call ended at its second attempt, before later handlers


URL = "http://127.0.0.1:9/"


@pytest.mark.parametrize(
    ("error", "ends"),
    [
        (EndpointConnectionError(endpoint_url=URL, error=ConnectionRefusedError(111)), True),
        (EndpointConnectionError(endpoint_url=URL, error=socket.gaierror(-2)), True),
        (ConnectTimeoutError(endpoint_url=URL, error="timed out"), True),
        (ConnectionClosedError(endpoint_url=URL), False),  # may follow a write
        (ReadTimeoutError(endpoint_url=URL), False),  # may follow a write
        (None, False),  # a reply: throttling, a 5xx, a CRC32 mismatch are the retry mode's
    ],
    ids=["refused", "no-such-host", "connect-timeout", "closed", "read-timeout", "reply"],
)
def test_only_a_connection_never_made_ends_the_tries(error: Exception | None, ends: bool) -> None:
    handler = UnreachableRetries(None, CONNECT_ATTEMPTS)
    assert handler(attempts=1, caught_exception=error, response=None) is None  # one retry
    if not ends:
        assert handler(attempts=4, caught_exception=error, response=None) is None
        return
    with pytest.raises(type(error)) as ended:
        handler(attempts=2, caught_exception=error, response=None)
    assert ended.value is error


def test_aiobotocores_reset_mid_request_is_left_to_retry() -> None:
    """aiobotocore reports a reset connection as ``EndpointConnectionError`` too."""

    class ConnectorError(OSError):
        """Stands for aiohttp's ``ClientConnectorError``: the connection was not made."""

    handler = UnreachableRetries((ConnectorError,), CONNECT_ATTEMPTS)
    reset = EndpointConnectionError(endpoint_url=URL, error=ConnectionResetError(104))
    assert handler(attempts=2, caught_exception=reset) is None
    refused = EndpointConnectionError(endpoint_url=URL, error=ConnectorError("refused"))
    with pytest.raises(EndpointConnectionError):
        handler(attempts=2, caught_exception=refused)
