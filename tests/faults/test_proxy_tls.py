"""Through an ``HTTPS_PROXY``, the endpoint's certificate is checked as without one.

A CONNECT proxy (``local_servers.ConnectProxy``) tunnels each connection to an HTTPS
server whose certificate the test made, the proxy never seeing inside the TLS. The
async transport's calls, aiobotocore's (each operation's first) and the lean path's,
and the blocking transport's, must each trust that certificate only when it is the CA
bundle (``AWS_CA_BUNDLE``) and only for the names it was issued for, and must send
nothing to a server they refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiobotocore.httpsession import AIOHTTPSession
from aiobotocore.session import AioSession

from sqsjobs.aws.transports import aio as aio_module
from sqsjobs.aws.transports.aio import AioTransport, checking_host_names
from sqsjobs.aws.transports.boto import BotoTransport
from sqsjobs.aws.transports.endpoint import Endpoint
from sqsjobs.aws.transports.lean import LeanSender, Route
from sqsjobs.aws.wire.protocol import AwsError, Call
from tests.aws.emulator import ENVIRONMENT

from .local_servers import ConnectProxy, Server, answering, certificate, server_context

GET = Call("dynamodb", "get_item", {"TableName": "jobs-ü", "Key": {"pk": {"S": "job#7f3a·ß"}}})


@pytest.fixture
async def proxy(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ConnectProxy]:
    """A CONNECT proxy that every https URL goes through (``HTTPS_PROXY``)."""
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    for name in ("https_proxy", "no_proxy", "NO_PROXY", "AWS_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    started = ConnectProxy()
    await started.start()
    monkeypatch.setenv("HTTPS_PROXY", started.url)
    yield started
    await started.stop()


@pytest.fixture
async def https() -> AsyncIterator[Callable[[Path, Path], Awaitable[Server]]]:
    """Start an HTTPS server echoing each request's body (read as a reply with no item)."""
    servers: list[Server] = []

    async def start(cert: Path, key: Path) -> Server:
        server = Server(answering())
        await server.start(server_context(cert, key))
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


@pytest.fixture
def lean_sends(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs of the requests the lean path sent."""
    handed: list[str] = []
    attempt = LeanSender._attempt

    async def noted(self: LeanSender, route: Route, body: bytes, context: Any) -> Any:
        handed.append(route.url)
        return await attempt(self, route, body, context)

    monkeypatch.setattr(LeanSender, "_attempt", noted)
    return handed


async def async_outcomes(url: str) -> list[str]:
    """What two calls of one operation do: the first aiobotocore's, the second lean."""
    transport = AioTransport(Endpoint(url, max_attempts=1, lean=True))
    try:
        return [await _outcome(transport(GET)) for _ in range(2)]
    finally:
        await transport.aclose()


async def blocking_outcome(url: str) -> str:
    transport = BotoTransport(Endpoint(url, max_attempts=1))
    try:
        return await _outcome(asyncio.to_thread(transport, GET))  # the proxy runs here
    finally:
        transport.close()


async def _outcome(call: Awaitable[Any]) -> str:
    try:
        reply = await call
    except AwsError as error:
        return error.code
    return str(reply["ResponseMetadata"]["HTTPStatusCode"])


async def test_an_untrusted_certificate_is_refused_through_the_proxy(
    proxy: ConnectProxy, https: Any, lean_sends: list[str], tmp_path: Path
) -> None:
    server = await https(*certificate(tmp_path))
    url = f"https://localhost:{server.port}"
    assert await async_outcomes(url) == ["SSLError", "SSLError"]
    assert set(lean_sends) == {f"{url}/"}  # the second call took the lean path
    assert await blocking_outcome(url) == "SSLError"
    assert set(proxy.tunnels) == {f"localhost:{server.port}"}
    assert (server.connections, server.requests) == (0, [])  # no request reached it


async def test_the_bundles_certificate_is_trusted_through_the_proxy(
    proxy: ConnectProxy,
    https: Any,
    lean_sends: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cert, key = certificate(tmp_path)
    monkeypatch.setenv("AWS_CA_BUNDLE", str(cert))
    server = await https(cert, key)
    url = f"https://localhost:{server.port}"
    assert await async_outcomes(url) == ["200", "200"]
    assert lean_sends == [f"{url}/"]  # the second call took the lean path
    assert await blocking_outcome(url) == "200"
    assert len(server.requests) == 3
    assert set(proxy.tunnels) == {f"localhost:{server.port}"}
    assert proxy.refused == []


async def test_a_trusted_certificate_for_another_name_is_refused_through_the_proxy(
    proxy: ConnectProxy, https: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate(tmp_path, ip=False)  # for localhost, not for 127.0.0.1
    monkeypatch.setenv("AWS_CA_BUNDLE", str(cert))
    server = await https(cert, key)
    url = f"https://127.0.0.1:{server.port}"
    assert await async_outcomes(url) == ["SSLError", "SSLError"]
    assert server.connections == 0  # the handshake failed on the name
    assert await blocking_outcome(url) == "SSLError"
    assert server.requests == []  # urllib3 matches the name after the handshake, then closes
    assert set(proxy.tunnels) == {f"127.0.0.1:{server.port}"}


async def test_verify_false_still_trusts_any_certificate_through_the_proxy(
    proxy: ConnectProxy, https: Any, tmp_path: Path
) -> None:
    """A client made with ``verify=False`` (not the transports', which always verify)
    keeps aiobotocore's unverified connections, through a proxy as without one."""
    server = await https(*certificate(tmp_path / "server"))
    url = f"https://localhost:{server.port}"
    async with AioSession().create_client("dynamodb", endpoint_url=url, verify=False) as client:
        checking_host_names(client)
        reply = await client.get_item(**GET.params)
    assert reply["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert len(server.requests) == 1 and len(proxy.tunnels) == 1


async def test_without_the_sessions_hooks_a_proxied_endpoint_is_refused_before_sending(
    proxy: ConnectProxy, https: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An aiobotocore whose session no longer has the hooks the transport replaces would
    reach the proxy with aiohttp's unverified connector: refused before any request."""
    cert, key = certificate(tmp_path)
    monkeypatch.setenv("AWS_CA_BUNDLE", str(cert))
    server = await https(cert, key)
    monkeypatch.delattr(AIOHTTPSession, "_create_connector")
    transport = AioTransport(Endpoint(f"https://localhost:{server.port}", max_attempts=1))
    try:
        with pytest.raises(aio_module.UnverifiableProxy, match="HTTPS_PROXY"):
            await transport(GET)
    finally:
        await transport.aclose()
    assert (proxy.tunnels, server.connections) == ([], 0)
