"""Loopback servers for the transports' tests: scripted HTTP, certificates, a proxy.

``Server`` runs a handler for each connection (plain or TLS) and counts them; a
handler reads requests with ``Peer.request`` and writes ``reply``s (``answering``
echoes each request's body back). ``certificate`` makes a self-signed certificate,
its own CA: a client trusts it only when given it as its CA bundle. ``ConnectProxy``
is the forward proxy an ``HTTPS_PROXY`` names: it opens the tunnel a ``CONNECT`` asks
for and relays bytes both ways without reading them, so TLS runs end to end between
client and server, as through a corporate proxy; it notes each tunnel's target.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path


class Peer:
    """One accepted connection: what the client sent on it, read a request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def request(self) -> tuple[bytes, bytes] | None:
        """The next request's head and body; ``None`` once the client closed."""
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return head, await self.reader.readexactly(length)


Handler = Callable[[Peer, "Server"], Awaitable[None]]


class Server:
    """A loopback server running ``handler`` for each connection; counts them."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.open = 0
        self.most_open = 0
        self.requests: list[tuple[bytes, bytes]] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self, tls: ssl.SSLContext | None = None) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=tls)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            await self.handler(Peer(reader, writer), self)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.open -= 1
            writer.close()

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


def reply(body: bytes, *extra: str, status: str = "200 OK") -> bytes:
    headers = "".join(f"{line}\r\n" for line in extra)
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"x-amzn-RequestId: r-{len(body)}\r\n{headers}Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def answering(*extra: str, delay: float = 0.0) -> Handler:
    """Echo every request's body back, on the same connection until the client closes
    it (or after one reply, if ``extra`` says ``Connection: close``)."""

    async def handler(peer: Peer, server: Server) -> None:
        while (request := await peer.request()) is not None:
            server.requests.append(request)
            await asyncio.sleep(delay)
            peer.writer.write(reply(request[1], *extra))
            await peer.writer.drain()
            if "Connection: close" in extra:
                return

    return handler


def certificate(directory: Path, *, ip: bool = True) -> tuple[Path, Path]:
    """A self-signed certificate for localhost (and 127.0.0.1), and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    names: list[x509.GeneralName] = [x509.DNSName("localhost")]
    if ip:
        names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    made = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(made.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server's TLS context presenting ``cert``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


class ConnectProxy:
    """A forward proxy on 127.0.0.1 that serves ``CONNECT`` only (anything else: 405);
    ``tunnels`` holds the target (``host:port``) of every tunnel it opened."""

    def __init__(self) -> None:
        self.tunnels: list[str] = []
        self.refused: list[bytes] = []  # request lines of anything but CONNECT
        self.port = 0
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening and end every tunnel (its relays see their connections close)."""
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()
        await asyncio.gather(*self._handlers)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = asyncio.current_task()
        assert handler is not None
        self._handlers.add(handler)  # type: ignore[arg-type]
        self._writers.add(writer)
        try:
            await self._tunnel(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._handlers.discard(handler)  # type: ignore[arg-type]
            self._writers.discard(writer)
            writer.close()

    async def _tunnel(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request_line = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n", 1)[0]
        method, target, _ = request_line.split(b" ", 2)
        if method != b"CONNECT":
            self.refused.append(request_line)
            writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            return
        self.tunnels.append(target.decode())
        host, _, port = target.decode().rpartition(":")
        upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port))
        self._writers.add(upstream_writer)
        try:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            await asyncio.gather(_relay(reader, upstream_writer), _relay(upstream_reader, writer))
        finally:
            self._writers.discard(upstream_writer)
            upstream_writer.close()


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy bytes until ``reader`` ends, then end ``writer`` too."""
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()
