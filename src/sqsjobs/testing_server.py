"""The emulator's HTTP server: moto's threaded werkzeug server, keeping connections open
between requests as AWS does.

werkzeug's development server closes the connection after every reply: ``http.server``
cannot tell a request body the application left unread from the client's next request,
and after each reply werkzeug reads and discards whatever the socket holds. Against such
a server every request pays for a new TCP connection, and a client's connection pool
never reuses a connection, so neither what a worker costs on AWS nor a pool's reuse is
what a test sees. Here each request's body is read in full before moto sees it, the
connection then stands at the next request's first byte, and werkzeug's discard is given
nothing to read. A request whose body is chunked (its end is found only by reading it),
or whose length is not a number, still closes its connection, as does a client that asks
for it.

Connections still open when the server stops are shut then, so no client goes on being
served by a stopped emulator through a thread left reading its connection.
"""

from __future__ import annotations

import io
import socket
import threading
from typing import Any

from moto.moto_server.werkzeug_app import MotoRequestHandler
from moto.server import ThreadedMotoServer

# What werkzeug's after-reply discard reads instead of the connection: nothing.
_NOTHING = io.BytesIO(b"")


class OpenConnections:
    """The server's client connections, for shutting those still open at stop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()

    def add(self, connection: socket.socket) -> None:
        with self._lock:
            self._sockets.add(connection)

    def discard(self, connection: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(connection)

    def shut_all(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for connection in sockets:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:  # closed by its client meanwhile
                continue


class KeepAliveHandler(MotoRequestHandler):
    """moto's request handler, quiet, leaving a connection open after a reply when the
    request was read to its end (see the module docstring)."""

    connections: OpenConnections  # the server's: ``KeepAliveServer`` makes a subclass
    _connection_stream: Any = None

    def setup(self) -> None:
        super().setup()
        # A reply goes out as headers then body: with Nagle's algorithm on, the body
        # would wait for the client's delayed ACK of the headers (40 ms on Linux) on a
        # connection that is not closed to flush it.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connections.add(self.connection)

    def finish(self) -> None:
        self.connections.discard(self.connection)
        super().finish()

    def log_request(self, *args: Any, **kwargs: Any) -> None:
        """One line per request on stderr would drown test and demo output."""

    def make_environ(self) -> dict[str, Any]:
        environ: dict[str, Any] = super().make_environ()
        length = str(environ.get("CONTENT_LENGTH") or "0")
        if environ.get("wsgi.input_terminated") or not length.isdigit():
            self.close_connection = True
            return environ
        environ["wsgi.input"] = io.BytesIO(self.rfile.read(int(length)))
        self._connection_stream, self.rfile = self.rfile, _NOTHING
        return environ

    def run_wsgi(self) -> None:
        try:
            super().run_wsgi()
        finally:
            if self._connection_stream is not None:
                self.rfile, self._connection_stream = self._connection_stream, None

    def send_header(self, keyword: str, value: str) -> None:
        closing = keyword.lower() == "connection" and value.lower() == "close"
        if closing and not self.close_connection:
            return  # werkzeug's "always close": this connection stays open
        super().send_header(keyword, value)


class KeepAliveServer(ThreadedMotoServer):
    """moto's server thread with ``KeepAliveHandler``.

    moto's thread ends on a bind error (werkzeug exits it) and ``start`` then waits
    forever: the failure is noted and ``start`` returns, for the caller to raise.
    """

    failed = False

    def __init__(self, *, port: int) -> None:
        super().__init__(ip_address="127.0.0.1", port=port, verbose=False)
        self.connections = OpenConnections()

    def start(self) -> None:
        super().start()
        if self._server is not None:
            # werkzeug's server looks its handler class up per connection, so setting it
            # before any client has connected applies to every connection.
            handler = type("Handler", (KeepAliveHandler,), {"connections": self.connections})
            self._server.RequestHandlerClass = handler

    def _server_entry(self) -> None:
        try:
            super()._server_entry()
        except (OSError, SystemExit):
            self.failed = True
            self._server_ready_event.set()

    def stop(self) -> None:
        super().stop()
        self.connections.shut_all()
