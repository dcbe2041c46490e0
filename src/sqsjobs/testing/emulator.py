"""The local AWS emulator, for your own tests and the demo.

``local_aws()`` runs moto's server in a background thread on a free 127.0.0.1 port (or
on ``port``, for an endpoint that other processes are told in advance) and yields its
endpoint URL; boto3 and aiobotocore clients reach it over real HTTP, so what is
tested is what runs against AWS. Give it credentials from the environment (any value
works, e.g. ``AWS_ACCESS_KEY_ID=testing``) and a region, as for AWS.

DynamoDB requests are served one at a time: moto checks a write's condition and applies
the write without a lock, so two concurrent conditional writes to one item could both
succeed, which DynamoDB never allows (every claim in sqsjobs relies on it). SQS requests
stay concurrent, so long polls do not block anything.

moto decides whether each message it is about to return is still within its queue's
retention by computing every attribute of the queue, message counts included, so a
receive cost grew with the queue's depth times the messages returned (a drain of a
200-message queue spent a third of the emulator's CPU there). ``local_aws`` makes that
check read the retention period alone: the same answer, in constant time, as on AWS.
It also makes a receive read a snapshot of the messages in flight, which moto iterates
while concurrent requests change them (a rare HTTP 500 under load).

Connections stay open between requests, as AWS keeps them (werkzeug's server closes each
after its reply; ``sqsjobs.testing.server`` has why and how): clients reuse their pooled
connections here as they do on AWS, and pay for a new one as rarely.

It serves the AWS APIs to SDKs on this machine and nothing else: not moto's own API
(``/moto-api/``: its dashboard, every backend's state as JSON, reset), not a request
whose ``Host`` is not 127.0.0.1 or localhost (a page reaching it by a name of its own),
not a request from a web page, and no reply says another origin may read it
(``sqsjobs.testing.server``). No test needs moto's API: a fresh ``local_aws`` block, or
unique resource names, isolate tests.

Running it leaves botocore as it was: moto's import would enrol every client the process
makes in moto's in-process mock, which the emulator never needs (``moto_loader``).

``counter=`` (``sqsjobs.testing.RequestCounter``) counts the requests it serves and
``meter=`` (``sqsjobs.testing.meter.BillingMeter``) the capacity they bill. Needs the
``local`` extra (``pip install sqsjobs[local]``).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..core.errors import JobConfigError
from .wsgi import WsgiApp

if TYPE_CHECKING:
    from .counter import RequestCounter
    from .meter import BillingMeter


@contextmanager
def local_aws(
    *, counter: RequestCounter | None = None, port: int = 0, meter: BillingMeter | None = None
) -> Iterator[str]:
    """Run the AWS emulator for the duration of the block; yields its endpoint URL.

        with local_aws() as endpoint:
            store = SqsJobStore.create("test", endpoint_url=endpoint)

    Args:
        counter: Counts the requests it serves, by service and action.
        port: The port on 127.0.0.1 to serve on; 0 picks a free one.
        meter: A ``sqsjobs.testing.meter.BillingMeter``: it sees every DynamoDB request
            inside the lock that serves them one at a time, so the item images it reads
            are exact.

    Yields:
        The endpoint URL (``http://127.0.0.1:PORT``), for ``endpoint_url=``.

    Raises:
        OSError: ``port`` is taken, at once.
        JobConfigError: ``port`` is not 0 to 65535.
        RuntimeError: moto is not installed (the ``local`` extra).
    """
    try:
        from .server import KeepAliveServer, aws_apis_only, sdks_only
    except ImportError as missing:  # pragma: no cover - depends on the install
        raise RuntimeError("local_aws() needs moto: pip install 'sqsjobs[local]'") from missing

    _check_port(port)
    _retention_in_constant_time()
    _pending_groups_from_a_snapshot()
    server = KeepAliveServer(port=port)
    server.start()
    if server.failed:
        raise OSError(f"Cannot serve on 127.0.0.1:{port}: the server could not bind it")
    try:
        # werkzeug's server looks its app up per request, so changing it now (before
        # any request) applies to every request.
        wsgi = server._server
        assert wsgi is not None
        app = aws_apis_only(wsgi.app)
        app = _one_dynamodb_request_at_a_time(app if meter is None else meter.wrap(app))
        if counter is not None:
            app = counter.wrap(app)
        wsgi.app = sdks_only(app)  # what it refuses, nothing behind it sees
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def _check_port(port: int) -> None:
    """A port that is not one, or is taken, fails here with a clear message (werkzeug
    would print its own to stderr and exit the server's thread)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise JobConfigError(
            "invalid_option", f"port must be 0 (any free port) to 65535, not {port!r}"
        )
    if port == 0:
        return
    with socket.socket() as probe:
        # As the server will: a port left in TIME_WAIT is free, a listening one is not.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            message = f"Cannot serve on 127.0.0.1:{port}: {error.strerror}"
            raise OSError(message) from error


def _retention_in_constant_time() -> None:
    """Replace moto's per-message retention check (see the module docstring) with one
    that reads the queue's retention period alone, once per process; the replaced check
    stays reachable as ``replaced``, for a test comparing the two."""
    from moto.core import utils as moto_utils
    from moto.sqs.models import SQSBackend

    original = SQSBackend.is_message_valid_based_on_retention_period
    if hasattr(original, "replaced"):
        return

    def within_retention(self: Any, queue_name: str, message: Any) -> bool:
        retention = int(self.get_queue(queue_name).message_retention_period)
        return bool(retention + message.sent_timestamp / 1000 > moto_utils.unix_time())

    within_retention.replaced = original  # type: ignore[attr-defined]
    SQSBackend.is_message_valid_based_on_retention_period = within_retention  # type: ignore[method-assign]


def _pending_groups_from_a_snapshot() -> None:
    """Make moto's FIFO group lock read a snapshot of the in-flight messages.

    A receive builds the set of groups in flight by iterating the queue's set of pending
    messages while a concurrent delete or receive may change it (SQS requests run
    concurrently here), which fails the receive with ``RuntimeError: Set changed size
    during iteration``, an HTTP 500 that botocore retries. Copying the set first (one C
    call, atomic under the GIL) gives the same groups without the race."""
    from moto.sqs.models import Queue

    original = Queue.__dict__["pending_message_groups"]  # the property itself
    if hasattr(original.fget, "replaced"):
        return

    def pending_message_groups(self: Any) -> set[str]:
        return {m.group_id for m in list(self._pending_messages) if m.group_id is not None}

    pending_message_groups.replaced = original  # type: ignore[attr-defined]
    Queue.pending_message_groups = property(pending_message_groups)  # type: ignore[method-assign,assignment]


def _one_dynamodb_request_at_a_time(app: WsgiApp) -> WsgiApp:
    lock = threading.Lock()

    def serialized(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if not str(environ.get("HTTP_X_AMZ_TARGET", "")).startswith("DynamoDB"):
            return app(environ, start_response)
        with lock:
            return list(app(environ, start_response))

    return serialized
