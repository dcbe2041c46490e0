"""``transports.lean_http`` against local servers that misbehave on purpose.

Each test serves scripted replies on a loopback port and checks what the lean path's
HTTP client makes of them: kept-alive and closed connections, chunked and
close-delimited bodies, the pool's limit, and every failure raised as the botocore
exception aiobotocore raises for it (so botocore's retry handler treats both alike).
TLS runs against a certificate made for the test.
"""

from __future__ import annotations

import asyncio
import gc
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiobotocore.config import AioConfig
from aiobotocore.httpsession import AIOHTTPSession
from botocore.awsrequest import AWSPreparedRequest
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
    SSLError,
)

from sqsjobs.aws.transports import tls as tls_module
from sqsjobs.aws.transports.aio import AioTransport
from sqsjobs.aws.transports.endpoint import Endpoint
from sqsjobs.aws.transports.lean_http import LeanHttp
from sqsjobs.aws.wire.protocol import AwsError, Call
from tests.aws.emulator import ENVIRONMENT

from .local_servers import Handler, Peer, Server, answering, certificate, reply

BODY = '{"TableName": "jobs-ü", "Key": {"pk": {"S": "job#7f3a"}}}'.encode()


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Awaitable[Server]]]:
    servers: list[Server] = []

    async def start(handler: Handler, tls: ssl.SSLContext | None = None) -> Server:
        server = Server(handler)
        await server.start(tls)
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


def lean_http(
    *, read_timeout: float = 5.0, connect_timeout: float = 5.0, **session: Any
) -> LeanHttp:
    config = AioConfig(read_timeout=read_timeout, connect_timeout=connect_timeout)
    made = LeanHttp.serving(AIOHTTPSession(**session), config)
    assert made is not None
    return made


def post(url: str, body: bytes = BODY) -> AWSPreparedRequest:
    headers = {
        "X-Amz-Target": b"DynamoDB_20120810.GetItem",
        "Content-Type": b"application/x-amz-json-1.0",
        "Content-Length": str(len(body)),
    }
    return AWSPreparedRequest("POST", url, headers, body, False)


async def test_a_kept_alive_connection_carries_one_request_after_another(serve: Any) -> None:
    server = await serve(answering())
    http = lean_http()
    url = f"http://127.0.0.1:{server.port}/"
    for n in range(3):
        body = BODY + b" " * n
        response = await http.send(post(url, body))
        assert (response.status_code, await response.content) == (200, body)
        assert response.headers["X-Amzn-RequestId"] == f"r-{len(body)}"  # any case
    assert (server.connections, len(server.requests)) == (1, 3)
    head, body = server.requests[0]
    assert head.startswith(b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % server.port)
    assert b"\r\nX-Amz-Target: DynamoDB_20120810.GetItem\r\n" in head
    assert b"\r\nContent-Length: %d\r\n" % len(BODY) in head
    await http.close()
    await asyncio.sleep(0.05)
    assert server.open == 0  # closing the client closes its idle connection


async def test_a_server_that_closes_each_connection_gets_a_new_one_per_request(
    serve: Any,
) -> None:
    """As the emulator does (``Connection: close``): every reply is still read whole."""
    server = await serve(answering("Connection: close"))
    http = lean_http()
    url = f"http://127.0.0.1:{server.port}/"
    replies = [await (await http.send(post(url))).content for _ in range(3)]
    assert replies == [BODY] * 3
    assert server.connections == 3


async def test_chunked_and_close_delimited_replies_are_read_whole(serve: Any) -> None:
    async def chunked(peer: Peer, server: Server) -> None:
        while await peer.request() is not None:
            peer.writer.write(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":')
            await peer.writer.drain()
            await asyncio.sleep(0.05)  # the reply arrives in two reads
            peer.writer.write(b'\r\n4\r\n"\xc3\xbc"\r\n1\r\n}\r\n0\r\n\r\n')
            await peer.writer.drain()

    async def until_close(peer: Peer, server: Server) -> None:
        await peer.request()
        peer.writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + BODY)
        await peer.writer.drain()

    http = lean_http()
    chunks = await serve(chunked)
    url = f"http://127.0.0.1:{chunks.port}/"
    expected = '{"a":"ü"}'.encode()
    assert [await (await http.send(post(url))).content for _ in range(2)] == [expected] * 2
    assert chunks.connections == 1
    closing = await serve(until_close)
    response = await http.send(post(f"http://127.0.0.1:{closing.port}/"))
    assert await response.content == BODY


async def test_concurrent_requests_open_connections_up_to_the_pool_size(serve: Any) -> None:
    server = await serve(answering(delay=0.1))
    http = lean_http(max_pool_connections=2)
    url = f"http://127.0.0.1:{server.port}/"
    replies = await asyncio.gather(*(http.send(post(url, b"%d" % n)) for n in range(6)))
    assert [await r.content for r in replies] == [b"%d" % n for n in range(6)]
    assert (server.connections, server.most_open) == (2, 2)


async def test_a_request_cancelled_while_waiting_for_a_connection_takes_none(
    serve: Any,
) -> None:
    """With one connection allowed, a request cancelled in the queue neither keeps the
    slot nor strands the one behind it."""
    server = await serve(answering(delay=0.2))
    http = lean_http(max_pool_connections=1)
    url = f"http://127.0.0.1:{server.port}/"
    first = asyncio.ensure_future(http.send(post(url, b"first")))
    second = asyncio.ensure_future(http.send(post(url, b"second")))
    third = asyncio.ensure_future(http.send(post(url, b"third")))
    await asyncio.sleep(0.05)
    second.cancel()
    replies = await asyncio.gather(first, third)
    assert [await reply.content for reply in replies] == [b"first", b"third"]
    assert second.cancelled()
    assert (server.connections, server.most_open) == (1, 1)  # kept alive, one at a time


async def test_a_connection_ended_before_its_reply_raises_connection_closed(
    serve: Any,
) -> None:
    """No reply, half a reply, or bytes that are no HTTP: ``ConnectionClosedError``,
    which botocore's retry handler retries; the next request gets a new connection."""
    behaviours = [
        b"",
        b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"half',
        b"SMTP ready\r\n\r\n",
    ]

    async def failing(peer: Peer, server: Server) -> None:
        if server.connections <= len(behaviours):
            await peer.request()
            peer.writer.write(behaviours[server.connections - 1])
            await peer.writer.drain()
            return
        await answering()(peer, server)

    server = await serve(failing)
    http = lean_http()
    url = f"http://127.0.0.1:{server.port}/"
    for _ in behaviours:
        with pytest.raises(ConnectionClosedError) as raised:
            await http.send(post(url))
        assert raised.value.kwargs["endpoint_url"] == url
    assert await (await http.send(post(url))).content == BODY
    assert server.connections == len(behaviours) + 1


async def test_a_silent_server_raises_read_timeout_and_a_slow_one_does_not(
    serve: Any,
) -> None:
    """The read timeout counts from the last byte, as a socket's does."""

    async def silent(peer: Peer, server: Server) -> None:
        await peer.request()
        await asyncio.sleep(2)

    async def trickling(peer: Peer, server: Server) -> None:
        await peer.request()
        for byte in reply(BODY, "Connection: close"):
            peer.writer.write(bytes([byte]))
            await peer.writer.drain()
            await asyncio.sleep(0.004)  # the whole reply takes far longer than the timeout

    http = lean_http(read_timeout=0.25)
    server = await serve(silent)
    with pytest.raises(ReadTimeoutError):
        await http.send(post(f"http://127.0.0.1:{server.port}/"))
    server = await serve(trickling)
    response = await http.send(post(f"http://127.0.0.1:{server.port}/"))
    assert await response.content == BODY


async def test_an_endpoint_that_refuses_or_never_answers_the_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens once it is closed
    http = lean_http(connect_timeout=0.2)
    with pytest.raises(EndpointConnectionError):
        await http.send(post(f"http://127.0.0.1:{port}/"))
    loop = asyncio.get_running_loop()

    async def never(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(10)

    monkeypatch.setattr(loop, "create_connection", never)
    with pytest.raises(ConnectTimeoutError):
        await http.send(post(f"http://127.0.0.1:{port}/"))


async def test_a_cancelled_request_closes_its_connection(serve: Any) -> None:
    server = await serve(answering(delay=0.3))
    http = lean_http()
    url = f"http://127.0.0.1:{server.port}/"
    sending = asyncio.ensure_future(http.send(post(url)))
    await asyncio.sleep(0.1)
    sending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sending
    assert await (await http.send(post(url))).content == BODY  # its late reply is not read
    assert server.connections == 2


async def test_idle_connections_older_than_the_keep_alive_time_are_not_reused(
    serve: Any,
) -> None:
    server = await serve(answering())
    http = lean_http(connector_args={"keepalive_timeout": 0.1})
    url = f"http://127.0.0.1:{server.port}/"
    await http.send(post(url))
    await http.send(post(url))
    await asyncio.sleep(0.2)
    await http.send(post(url))
    assert server.connections == 2


@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_closing_from_another_loop_leaves_a_closed_loops_connections_alone() -> None:
    """A loop closed without closing its clients (``loop.close()`` after
    ``run_until_complete``) leaves a kept-alive connection; closing the client from the
    next loop (as ``transports.aio`` does) must not touch the closed one, whose socket
    goes with it, as aiohttp's do."""
    with socket.create_server(("127.0.0.1", 0)) as listening:
        port = listening.getsockname()[1]

        def keep_alive_once() -> None:
            peer, _ = listening.accept()
            with peer:
                peer.recv(65536)
                peer.sendall(reply(BODY))
                peer.recv(65536)  # until the client's side goes

        threading.Thread(target=keep_alive_once, daemon=True).start()
        http = lean_http()
        old = asyncio.new_event_loop()
        response = old.run_until_complete(http.send(post(f"http://127.0.0.1:{port}/")))
        assert old.run_until_complete(response.content) == BODY
        assert http._idle  # kept alive, idle
        old.close()
        asyncio.run(http.close())  # no "Event loop is closed"
        assert not http._idle
        gc.collect()  # the closed loop's transport goes now, inside this test


async def test_proxied_endpoints_and_other_connector_settings_stay_with_aiohttp(
    serve: Any,
) -> None:
    """A proxy for the URL: the request goes to aiobotocore's session, which knows
    proxies; connector arguments of the caller's: no lean HTTP at all."""
    server = await serve(answering())
    session = AIOHTTPSession(proxies={"http": "http://127.0.0.1:9"})
    http = LeanHttp.serving(session, AioConfig())
    assert http is not None
    handed: list[str] = []

    async def aiohttp_send(request: Any) -> Any:
        handed.append(request.url)
        return "aiohttp's reply"

    session.send = aiohttp_send
    url = f"http://127.0.0.1:{server.port}/"
    assert await http.send(post(url)) == "aiohttp's reply"
    assert (handed, server.connections) == ([url], 0)
    forced = AIOHTTPSession(connector_args={"force_close": True})
    assert LeanHttp.serving(forced, AioConfig()) is None
    assert LeanHttp.serving(object(), AioConfig()) is None


async def test_tls_verifies_as_the_session_says(serve: Any, tmp_path: Path) -> None:
    """The CA bundle the session names is trusted, the system's alone is not, and
    ``verify=False`` trusts any certificate; every request still reaches the server."""
    cert, key = certificate(tmp_path)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    server = await serve(answering(), tls)
    url = f"https://localhost:{server.port}/"
    trusting = lean_http(verify=str(cert))
    assert [await (await trusting.send(post(url))).content for _ in range(2)] == [BODY] * 2
    assert server.connections == 1
    with pytest.raises(SSLError):
        await lean_http(verify=True).send(post(url))
    unverified = lean_http(verify=False)
    assert await (await unverified.send(post(url))).content == BODY
    await trusting.close()
    await unverified.close()


async def test_tls_checks_the_host_name_the_certificate_is_for(serve: Any, tmp_path: Path) -> None:
    """A trusted certificate for another name is refused, as botocore refuses it."""
    cert, key = certificate(tmp_path, ip=False)  # for localhost, not for 127.0.0.1
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    server = await serve(answering(), tls)
    http = lean_http(verify=str(cert))
    assert await (await http.send(post(f"https://localhost:{server.port}/"))).content == BODY
    with pytest.raises(SSLError):
        await http.send(post(f"https://127.0.0.1:{server.port}/"))
    await http.close()


async def test_the_transports_ordinary_calls_check_the_host_name_too(
    serve: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """aiobotocore's own calls (each operation's first, and those the lean path does
    not send) go through aiohttp, which checks a certificate's name only when the SSL
    context asks it to: ``transports.aio`` makes it ask."""
    cert, key = certificate(tmp_path, ip=False)  # for localhost, not for 127.0.0.1
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    server = await serve(answering(), tls)
    for name, value in {**ENVIRONMENT, "AWS_CA_BUNDLE": str(cert)}.items():
        monkeypatch.setenv(name, value)
    call = Call("dynamodb", "get_item", {"TableName": "jobs-ü", "Key": {"pk": {"S": "job#7f3a"}}})
    named = AioTransport(Endpoint(f"https://localhost:{server.port}", max_attempts=1))
    other = AioTransport(Endpoint(f"https://127.0.0.1:{server.port}", max_attempts=1))
    try:
        reply = await named(call)  # the echoed request reads as a reply with no item
        assert reply["ResponseMetadata"]["HTTPStatusCode"] == 200
        with pytest.raises(AwsError) as refused:
            await other(call)
        assert refused.value.code == "SSLError"
    finally:
        await named.aclose()
        await other.aclose()


async def test_every_client_shares_one_context_per_set_of_tls_settings(
    serve: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading a CA bundle costs about 40 ms of CPU; aiobotocore loaded it for each client
    it made, and a worker makes one per service and event loop. The process now makes one
    context per set of TLS settings, for aiohttp's connections and ``lean_http``'s."""
    cert, key = certificate(tmp_path, ip=False)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    server = await serve(answering(), tls)
    for name, value in {**ENVIRONMENT, "AWS_CA_BUNDLE": str(cert)}.items():
        monkeypatch.setenv(name, value)
    made: list[ssl.SSLContext] = []
    create = tls_module.create_urllib3_context

    def counted() -> ssl.SSLContext:
        made.append(create())
        return made[-1]

    monkeypatch.setattr(tls_module, "create_urllib3_context", counted)
    url = f"https://localhost:{server.port}"
    get = Call("dynamodb", "get_item", {"TableName": "jobs-ü", "Key": {"pk": {"S": "job#7f3a"}}})
    send = Call("sqs", "send_message", {"QueueUrl": f"{url}/1/q", "MessageBody": "zoë"})
    transports = [AioTransport(Endpoint(url, max_attempts=1)) for _ in range(2)]
    try:
        for transport in transports:
            for call in (get, get, send):  # the first get is aiobotocore's, the second lean
                assert (await transport(call))["ResponseMetadata"]["HTTPStatusCode"] == 200
    finally:
        for transport in transports:
            await transport.aclose()
    assert len(made) == 1
    assert len(server.requests) == 6
