"""HTTP/1.1 for the lean path: one POST at a time per connection, kept alive when allowed.

A worker's job is two or three small POSTs. Through aiohttp each is a ``ClientRequest``
and a ``ClientResponse`` with their multidicts, a timer context, trace hooks and a
connector's bookkeeping, and aiobotocore converts every header of the reply once more;
once botocore's own pipeline was out of the way, that was the larger part of what a
worker spent per job (docs/benchmarks.md). The lean path's requests need none of it.
Each is a signed POST with a known length to a URL fixed per route, and each reply is
small and read whole, so ``LeanHttp`` writes the request in one ``write`` and reads the
reply with ``httptools`` (llhttp, the parser aiohttp and uvicorn use) straight into the
values botocore reads.

It serves what aiobotocore's ``AIOHTTPSession.send`` serves, for the sessions it can
serve the same way (``LeanHttp.serving``), and hands that session the requests of any
URL its proxy settings send through a proxy. It keeps the session's TLS settings
(verification, CA bundle, client certificate) in an ``SSLContext`` made as aiobotocore
makes it, the client's connect and read timeouts and pool size, and aiobotocore's
keep-alive time. Failures are raised as the botocore exceptions aiobotocore raises for
them, so botocore's retry handler and ``transports.errors`` treat them alike:
``EndpointConnectionError`` (refused, unresolvable), ``ConnectTimeoutError``,
``SSLError``, ``ReadTimeoutError``, and ``ConnectionClosedError`` for a connection
that ended before its reply did. A connection is reused only after a complete reply
that allows it; a cancelled or failed exchange closes its connection.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from collections.abc import Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from aiobotocore._constants import DEFAULT_KEEPALIVE_TIMEOUT  # type: ignore[import-untyped]
from aiobotocore.awsrequest import AioAWSResponse  # type: ignore[import-untyped]
from botocore.httpsession import (  # type: ignore[import-untyped]
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
    SSLError,
)

from .lean_connection import Connection
from .lean_sign import signed_host
from .tls import shared_context

DEFAULT_PORTS = {"http": 80, "https": 443}


class Origin(NamedTuple):
    """Where a URL's requests connect, and the start of every request to it."""

    scheme: str
    host: str
    port: int
    head: bytes  # the request line and Host header


class Body:
    """A reply's body, handed to ``AioAWSResponse`` as its raw stream (read once)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    async def read(self) -> bytes:
        return self.data


class LeanHttp:
    """Connections to the origins of one client's lean routes; see the module docstring."""

    def __init__(
        self,
        session: Any,
        *,
        tls: TlsSettings,
        connect_timeout: float | None,
        read_timeout: float | None,
        limit: int,
        keepalive: float = DEFAULT_KEEPALIVE_TIMEOUT,
    ) -> None:
        self._session = session  # aiobotocore's, for URLs that go through a proxy
        self._tls = tls
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._keepalive = keepalive
        self._slots = Slots(limit)
        self._origins: dict[str, Origin | None] = {}
        self._idle: dict[Origin, list[tuple[float, Connection]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None  # where its connections live

    @classmethod
    def serving(cls, session: Any, config: Any) -> LeanHttp | None:
        """One for aiobotocore's ``session`` (an ``AIOHTTPSession``) of a client with
        ``config``; ``None`` where that session is of another kind or was given
        connector arguments other than aiobotocore's own (aiohttp's to interpret)."""
        try:
            verify, cert, key = session._verify, session._cert_file, session._key_file
            connector_args = session._connector_args or {}
            limit = session._max_pool_connections
            proxies = session._proxy_config
        except AttributeError:
            return None
        if not callable(getattr(proxies, "proxy_url_for", None)):
            return None
        if set(connector_args) - {"keepalive_timeout"}:
            return None
        return cls(
            session,
            tls=TlsSettings(verify, cert, key),
            connect_timeout=config.connect_timeout,
            read_timeout=config.read_timeout,
            limit=limit,
            keepalive=connector_args.get("keepalive_timeout", DEFAULT_KEEPALIVE_TIMEOUT),
        )

    async def send(self, request: Any) -> Any:
        """POST ``request`` (an ``AWSPreparedRequest``); its reply as aiobotocore's."""
        origin = self._origin(request.url)
        if origin is None:
            return await self._session.send(request)
        data = _request_bytes(origin, request.headers, request.body)
        await self._slots.take()
        try:
            connection = self._reusable(origin) or await self._connect(origin, request.url)
            try:
                status, headers, body = await connection.exchange(data, self._read_timeout)
            except asyncio.CancelledError:
                connection.close()
                raise
            except Exception as error:
                connection.close()
                raise _failure(error, request) from error
            if connection.reusable:
                self._idle.setdefault(origin, []).append((time.monotonic(), connection))
            else:
                connection.close()
        finally:
            self._slots.give_back()
        return AioAWSResponse(request.url, status, headers, Body(body))

    async def close(self) -> None:
        """Close the idle connections (none is busy once the client's calls are over).

        From another loop, after theirs was closed without closing them, nothing is
        touched: as aiohttp's connector does, they went with that loop."""
        idle, self._idle = self._idle, {}
        if self._loop is not None and self._loop.is_closed():
            return
        for connections in idle.values():
            for _, connection in connections:
                connection.close()

    def _origin(self, url: str) -> Origin | None:
        """Where ``url``'s requests connect; ``None`` for a proxy's URL (aiohttp's)."""
        try:
            return self._origins[url]
        except KeyError:
            proxied = self._session._proxy_config.proxy_url_for(url)
            origin = self._origins[url] = None if proxied else _origin_of(url)
            return origin

    def _reusable(self, origin: Origin) -> Connection | None:
        """The most recently used idle connection that is still open and fresh."""
        connections = self._idle.get(origin)
        oldest = time.monotonic() - self._keepalive
        while connections:
            since, connection = connections.pop()
            if since >= oldest and connection.open:
                return connection
            connection.close()
        return None

    async def _connect(self, origin: Origin, url: str) -> Connection:
        loop = self._loop = asyncio.get_running_loop()
        tls = self._tls.context() if origin.scheme == "https" else None
        try:
            async with asyncio.timeout(self._connect_timeout):
                _, connection = await loop.create_connection(
                    Connection,
                    origin.host,
                    origin.port,
                    ssl=tls,
                    server_hostname=origin.host if tls is not None else None,
                )
        except TimeoutError as error:
            raise ConnectTimeoutError(endpoint_url=url, error=error) from error
        except ssl.SSLError as error:
            raise SSLError(endpoint_url=url, error=error) from error
        except OSError as error:
            raise EndpointConnectionError(endpoint_url=url, error=error) from error
        return connection


class Slots:
    """At most ``limit`` exchanges at once, the rest waiting in turn. Unlike
    ``asyncio.Semaphore`` (3.11), taking a free slot allocates nothing."""

    def __init__(self, limit: int) -> None:
        self._free = limit
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def take(self) -> None:
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            await waiter  # handed a slot by ``give_back``
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.give_back()  # handed one, but cancelled before it could use it
            raise

    def give_back(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes to it
                return
        self._free += 1


def _origin_of(url: str) -> Origin:
    """Where ``url`` connects, and its request line and ``Host`` header: the host botocore
    signs (the port left out when it is the scheme's default)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    target = parts.path or "/"
    if parts.query:
        target += f"?{parts.query}"
    head = f"POST {target} HTTP/1.1\r\nHost: {signed_host(url)}\r\n".encode()
    return Origin(scheme, parts.hostname, parts.port or DEFAULT_PORTS[scheme], head)


def _request_bytes(origin: Origin, headers: Mapping[str, str | bytes], body: bytes) -> bytes:
    """The whole request; the body's length is in ``headers`` (``Content-Length``)."""
    lines = [origin.head]
    for name, value in headers.items():
        lines.append(name.encode())
        lines.append(b": ")
        lines.append(value if isinstance(value, bytes) else value.encode())
        lines.append(b"\r\n")
    lines.append(b"Accept-Encoding: identity\r\n\r\n")  # aiobotocore asks for it too
    lines.append(body)
    return b"".join(lines)


class TlsSettings(NamedTuple):
    """The session's TLS settings; their context is asked for only by an https
    connection (the process makes it once, ``tls.shared_context``)."""

    verify: Any  # False, True, or a CA bundle's path
    cert: str | None
    key: str | None

    def context(self) -> ssl.SSLContext:
        """The context aiobotocore's connector uses for an endpoint without a proxy,
        checking the certificate's host name too, shared by the process (``tls``)."""
        return shared_context(self.verify, self.cert, self.key)


def _failure(error: Exception, request: Any) -> Exception:
    """The botocore exception aiobotocore raises for what ended an exchange."""
    url = request.url
    failure: Exception
    if isinstance(error, TimeoutError):
        failure = ReadTimeoutError(endpoint_url=url, error=error)
    else:
        failure = ConnectionClosedError(error=error, request=request, endpoint_url=url)
    return failure
