"""Test helpers: a local AWS emulator for your own tests and the demo.

``local_aws()`` runs moto's server in a background thread on a free 127.0.0.1 port (or
on ``port``, for an endpoint that other processes are told in advance) and yields its
endpoint URL; boto3 and aioboto3 clients reach it over real HTTP, so what is
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

Connections stay open between requests, as AWS keeps them (werkzeug's server closes each
after its reply; ``sqsjobs.testing_server`` has why and how): clients reuse their pooled
connections here as they do on AWS, and pay for a new one as rarely.

It serves the AWS APIs to SDKs on this machine and nothing else: not moto's own API
(``/moto-api/``: its dashboard, every backend's state as JSON, reset), not a request
whose ``Host`` is not 127.0.0.1 or localhost (a page reaching it by a name of its own),
not a request from a web page, and no reply says another origin may read it
(``sqsjobs.testing_server``). No test needs moto's API: a fresh ``local_aws`` block, or
unique resource names, isolate tests.

``RequestCounter`` counts the requests the emulator serves by service and action, for
assertions on request budgets (counts, never times). Needs the ``local`` extra
(``pip install sqsjobs[local]``).
"""

from __future__ import annotations

import io
import json
import socket
import threading
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._errors import JobConfigError

if TYPE_CHECKING:
    from .testing_meter import BillingMeter

__all__ = ["RequestCounter", "RequestCounts", "local_aws"]

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

DYNAMODB_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem"})
DYNAMODB_BATCH_WRITES = frozenset({"BatchWriteItem", "TransactWriteItems"})
DYNAMODB_READS = frozenset(
    {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "ExecuteStatement"}
)


@contextmanager
def local_aws(
    *, counter: RequestCounter | None = None, port: int = 0, meter: BillingMeter | None = None
) -> Iterator[str]:
    """Run the AWS emulator for the duration of the block; yields its endpoint URL.

    ``port=0`` picks a free port. A port that is taken raises ``OSError`` at once.
    ``meter`` (``sqsjobs.testing_meter.BillingMeter``) sees every DynamoDB request inside
    the lock that serves them one at a time, so the item images it reads are exact.
    """
    try:
        from .testing_server import KeepAliveServer, aws_apis_only, sdks_only
    except ImportError as missing:  # pragma: no cover - depends on the install
        raise RuntimeError("local_aws() needs moto: pip install 'sqsjobs[local]'") from missing

    _check_port(port)
    _retention_in_constant_time()
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


def _one_dynamodb_request_at_a_time(app: WsgiApp) -> WsgiApp:
    lock = threading.Lock()

    def serialized(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if not str(environ.get("HTTP_X_AMZ_TARGET", "")).startswith("DynamoDB"):
            return app(environ, start_response)
        with lock:
            return list(app(environ, start_response))

    return serialized


@dataclass(frozen=True)
class RequestCounts:
    """Requests by ``(service, action)``, and DynamoDB items written and read requests."""

    requests: Counter[tuple[str, str]]
    dynamodb_writes: int
    dynamodb_reads: int

    @classmethod
    def none(cls) -> RequestCounts:
        return cls(Counter(), 0, 0)

    def __add__(self, other: RequestCounts) -> RequestCounts:
        return RequestCounts(
            self.requests + other.requests,
            self.dynamodb_writes + other.dynamodb_writes,
            self.dynamodb_reads + other.dynamodb_reads,
        )

    def __sub__(self, earlier: RequestCounts) -> RequestCounts:
        return RequestCounts(
            self.requests - earlier.requests,
            self.dynamodb_writes - earlier.dynamodb_writes,
            self.dynamodb_reads - earlier.dynamodb_reads,
        )

    def service(self, name: str) -> int:
        return sum(n for (service, _), n in self.requests.items() if service == name)


class RequestCounter:
    """Counts what the emulator serves. ``dynamodb_writes`` counts items, so a batch
    write of 10 is 10 writes; reads count requests (GetItem, Query, ...)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: Counter[tuple[str, str]] = Counter()
        self._writes = 0
        self._reads = 0

    def counts(self) -> RequestCounts:
        with self._lock:
            return RequestCounts(Counter(self._requests), self._writes, self._reads)

    def wrap(self, app: WsgiApp) -> WsgiApp:
        def counting(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            self._observe(environ)
            return app(environ, start_response)

        return counting

    def _observe(self, environ: dict[str, Any]) -> None:
        service, action = _service_action(environ)
        written = 0
        if service == "dynamodb" and action in DYNAMODB_WRITES:
            written = 1
        elif service == "dynamodb" and action in DYNAMODB_BATCH_WRITES:
            written = _items_in(_body(environ), action)
        with self._lock:
            self._requests[(service, action)] += 1
            self._writes += written
            self._reads += service == "dynamodb" and action in DYNAMODB_READS


def _service_action(environ: dict[str, Any]) -> tuple[str, str]:
    target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
    prefix, _, action = target.partition(".")
    if prefix.startswith("DynamoDB"):
        return "dynamodb", action
    if prefix == "AmazonSQS":
        return "sqs", action
    auth = str(environ.get("HTTP_AUTHORIZATION", ""))
    service = auth.split("Credential=")[-1].split("/")[3] if "Credential=" in auth else "?"
    return service, action or _query_action(environ) or "?"


def _query_action(environ: dict[str, Any]) -> str:
    """The ``Action`` of a query-protocol request (CloudFormation, IAM): in its form body."""
    if "x-www-form-urlencoded" not in str(environ.get("CONTENT_TYPE", "")):
        return str(environ.get("QUERY_STRING", ""))
    form = urllib.parse.parse_qs(_body(environ).decode("utf-8", "replace"))
    return form.get("Action", [""])[0]


def _body(environ: dict[str, Any]) -> bytes:
    """Read the request body and put it back for the emulator."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    data: bytes = environ["wsgi.input"].read(length)
    environ["wsgi.input"] = io.BytesIO(data)
    return data


def _items_in(data: bytes, action: str) -> int:
    request = json.loads(data or b"{}")
    if action == "TransactWriteItems":
        return len(request.get("TransactItems", []))
    return sum(len(writes) for writes in request.get("RequestItems", {}).values())
