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

It serves the AWS APIs to SDKs on this machine, and nothing to web pages. moto's app
also serves its own API (``/moto-api/``: a dashboard, every backend's state as JSON,
reset, seeds, recordings) and fake instance metadata, and answers any origin's CORS
preflight and every reply with ``Access-Control-Allow-Origin``: while a demo runs, any
page open in a browser could read its queues and tables, or reach them through a name
of its own resolving to 127.0.0.1 (DNS rebinding). ``aws_apis_only`` refuses what moto
would hand its own API or instance metadata (404); ``sdks_only`` refuses a ``Host``
other than 127.0.0.1 or localhost (400) and any request a browser makes (403), and
drops CORS headers from every reply.
"""

from __future__ import annotations

import io
import re
import socket
import threading
from collections.abc import Callable, Iterable
from typing import Any

from .moto_loader import MotoRequestHandler, ThreadedMotoServer
from .wsgi import WsgiApp

# What werkzeug's after-reply discard reads instead of the connection: nothing.
_NOTHING = io.BytesIO(b"")

# The ``Host`` of an SDK's request on this machine (the emulator listens on 127.0.0.1).
LOOPBACK_HOST = re.compile(r"(?:127\.0\.0\.1|localhost)(?::[0-9]{1,5})?", re.IGNORECASE)
# moto's backends that are no AWS API: its own API and the EC2 instance metadata.
MOTO_OWN_BACKENDS = frozenset({"moto_api", "instance_metadata"})


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


def aws_apis_only(dispatcher: Any) -> WsgiApp:
    """moto's dispatcher (``DomainDispatcherApplication``), refusing with 404 a request it
    would hand one of ``MOTO_OWN_BACKENDS``. It is asked which backend serves a request,
    as it decides it (by the path's prefix, else by the headers, a credential scope's
    service included), so no other spelling of a path reaches those backends."""
    pick = dispatcher.get_application

    def served(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        backend = pick(environ)
        if getattr(backend, "service", None) in MOTO_OWN_BACKENDS:
            return _refused(start_response, "404 Not Found", "not an AWS API")
        result: Iterable[bytes] = backend(environ, start_response)
        return result

    return served


def sdks_only(app: WsgiApp) -> WsgiApp:
    """``app`` for requests an SDK on this machine makes: ``Host`` 127.0.0.1 or localhost
    (any port: a front that forwards requests names its own), no sign of a browser
    (``Origin``, or a ``Sec-Fetch-Site`` other than ``none``, a typed-in address); and
    no CORS headers in any reply, so no page of another origin may read one."""

    def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        host = str(environ.get("HTTP_HOST", ""))
        if not LOOPBACK_HOST.fullmatch(host):
            why = f"Host {host!r} is not served: name 127.0.0.1 or localhost"
            return _refused(start_response, "400 Bad Request", why)
        if "HTTP_ORIGIN" in environ or environ.get("HTTP_SEC_FETCH_SITE", "none") != "none":
            why = "requests from web pages are not served: the emulator serves AWS SDKs"
            return _refused(start_response, "403 Forbidden", why)
        return app(environ, _without_cors(start_response))

    return guarded


def _without_cors(start_response: Callable[..., Any]) -> Callable[..., Any]:
    def starting(status: str, headers: list[tuple[str, str]], *exc_info: Any) -> Any:
        kept = [(name, value) for name, value in headers if not _is_cors(name)]
        return start_response(status, kept, *exc_info)

    return starting


def _is_cors(name: str) -> bool:
    return name.lower().startswith("access-control-")


def _refused(start_response: Callable[..., Any], status: str, why: str) -> list[bytes]:
    body = f"{why}\n".encode()
    headers = [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))]
    start_response(status, headers)
    return [body]
