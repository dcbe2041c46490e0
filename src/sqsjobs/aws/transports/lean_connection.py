"""One HTTP/1.1 connection of ``lean_http``: a request written whole, its reply parsed.

``Connection`` is an asyncio protocol fed to httptools' response parser (llhttp), whose
callbacks collect the status, the headers (names in lower case, as aiobotocore gives
them) and the body. An exchange ends with the parsed reply, or with an error for
``lean_http`` to turn into botocore's: the connection ending before the reply did, a
reply that is not HTTP, or no byte for the read timeout (counted from the last byte, as
a socket's is). A reply that allows it leaves the connection open for the next one.
"""

from __future__ import annotations

import asyncio

import httptools


class Connection(asyncio.Protocol):
    """One HTTP/1.1 connection, one exchange at a time; ``httptools`` calls its ``on_*``."""

    def __init__(self) -> None:
        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.Transport | None = None
        self._reply: asyncio.Future[tuple[int, dict[str, str], bytes]] | None = None
        self._headers: dict[str, str] = {}
        self._body: list[bytes] = []
        self._delimited_by_close = False
        self._timer: asyncio.TimerHandle | None = None
        self._heard = False  # bytes arrived since the read timer was set
        self.open = True
        self.reusable = False

    async def exchange(
        self, data: bytes, read_timeout: float | None
    ) -> tuple[int, dict[str, str], bytes]:
        """Send ``data``; the reply's status, headers (lower-case names) and body."""
        assert self._transport is not None and self._reply is None
        loop = asyncio.get_running_loop()
        reply: asyncio.Future[tuple[int, dict[str, str], bytes]] = loop.create_future()
        self._reply = reply
        self._headers, self._body, self.reusable, self._heard = {}, [], False, False
        if read_timeout is not None:
            self._timer = loop.call_later(read_timeout, self._read_timed_out, read_timeout)
        self._transport.write(data)
        try:
            return await reply
        finally:
            self._reply = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def close(self) -> None:
        self.open = self.reusable = False
        if self._transport is not None:
            self._transport.close()

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._heard = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(ConnectionError(f"unreadable HTTP reply: {error}"))
            self.close()

    def eof_received(self) -> bool:
        return False  # close the transport: replies never continue past the server's EOF

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = self.reusable = False
        if self._reply is not None and not self._reply.done():
            if self._delimited_by_close:
                self._finish()
            else:
                self._fail(ConnectionError(f"the server closed the connection: {exc or 'EOF'}"))

    # httptools callbacks

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        headers = self._headers
        self._delimited_by_close = (
            "content-length" not in headers and "transfer-encoding" not in headers
        )

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        self.reusable = self._parser.should_keep_alive()
        self._delimited_by_close = False
        self._finish()

    def _finish(self) -> None:
        if self._reply is not None and not self._reply.done():
            status: int = self._parser.get_status_code()
            self._reply.set_result((status, self._headers, b"".join(self._body)))

    def _fail(self, error: Exception) -> None:
        if self._reply is not None and not self._reply.done():
            self._reply.set_exception(error)

    def _read_timed_out(self, read_timeout: float) -> None:
        """No byte for ``read_timeout`` seconds ends the exchange; a byte re-arms it."""
        if self._heard:
            self._heard = False
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(read_timeout, self._read_timed_out, read_timeout)
            return
        self._fail(TimeoutError(f"no reply within {read_timeout} s"))
        self.close()
