"""A front for the local AWS emulator that closes every connection after its reply, for
measuring clients as a server that never keeps a connection open serves them.

The emulator keeps connections open between requests, as AWS does, and a client that
pools them (botocore, aiohttp) pays for a connection once. werkzeug's development
server, which moto runs, closes each after its reply, as do some proxies: there every
request of a client opens and closes a TCP connection of its own. This front serves one
request per connection, passing it to the emulator and its reply back with
``Connection: close``, then closes. It runs in its own process, so its CPU is counted
neither as the client's nor as the emulator's.

    python bench/closing_front.py http://127.0.0.1:PORT   # prints the front's endpoint

``front(endpoint)`` runs it for the duration of a ``with`` block.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit


@contextmanager
def front(endpoint: str) -> Iterator[str]:
    """A closing front for ``endpoint`` in a subprocess; yields the front's endpoint."""
    process = subprocess.Popen(
        [sys.executable, __file__, endpoint], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def content_length(head: bytes) -> int | None:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return None


async def exchange(upstream: tuple[str, int], request: bytes) -> bytes:
    """One request on a new connection to the emulator; its reply, whole."""
    reader, writer = await asyncio.open_connection(*upstream)
    try:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        length = content_length(head)
        if length is None:  # no length: the reply ends where the connection does
            raise ValueError("the emulator's reply has no Content-Length")
        return head + await reader.readexactly(length)
    finally:
        writer.close()


def closing(reply: bytes) -> bytes:
    """``reply`` saying ``Connection: close``."""
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"connection:")]
    return b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n" + body


async def serve(
    upstream: tuple[str, int], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        body = await reader.readexactly(content_length(head) or 0)
        writer.write(closing(await exchange(upstream, head + body)))
        await writer.drain()
    finally:
        writer.close()


async def main(endpoint: str) -> None:
    parts = urlsplit(endpoint)
    assert parts.hostname is not None and parts.port is not None
    upstream = (parts.hostname, parts.port)
    server = await asyncio.start_server(
        lambda reader, writer: serve(upstream, reader, writer), "127.0.0.1", 0
    )
    port = server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
