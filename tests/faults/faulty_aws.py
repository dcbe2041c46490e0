"""A fault layer in front of the AWS emulator: throttling, 500s, dropped connections and
lost responses, for a seeded fraction of requests or for every first attempt.

``FaultInjector`` is a ``RequestCounter`` (the hook ``local_aws`` offers around the moto
app), so it sees every request before moto does and decides its fate:

- ``THROTTLE``: HTTP 400 with the service's throttling error, in the protocol the
  client spoke: JSON 1.0 ``__type`` for DynamoDB (``ProvisionedThroughputExceededException``)
  and SQS (``ThrottlingException``, which botocore 1.40 speaks JSON to), XML
  ``ErrorResponse`` for query-protocol services (``Throttling``). Not applied.
- ``SERVER_ERROR``: HTTP 500 ``InternalServerError``/``InternalFailure``. Not applied.
- ``DROP``: the connection is closed with no response. Not applied.
- ``LOST_RESPONSE``: moto applies the request, then the connection is closed with no
  response: the write happened, the client cannot know.
- ``APPLIED_ERROR``: moto applies the request, then the client gets a 500 anyway.

The last two are where retries meet their own writes: a retried conditional ``PutItem``
finds the item its first try wrote, a retried ``SendMessage`` sends a second message.

Decisions come from one ``random.Random(seed)`` under a lock, so a run's fault rate and
mix are fixed by its seed (which requests get them still depends on thread timing).
``first_attempts`` mode instead faults every request whose ``amz-sdk-request`` header says
``attempt=1`` (botocore numbers its retries), which makes a run fully deterministic.
``limit`` stops the faults after that many: with ``rate=1.0`` the next ``limit`` eligible
requests fail and then the service recovers, outlasting botocore's retries on purpose.
``body_contains`` narrows the eligible requests to those whose body has that text (one
kind of ``UpdateItem`` and not another: a completion names ``completed_at``, a heartbeat
does not), and ``first`` gives the first eligible requests these faults, in order,
before the plan's own rule applies (a lost response, then throttling).
Clients made with ``OBSERVER_CONFIG`` (a test reading what happened) are never faulted.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from http import HTTPStatus
from typing import Any

from botocore.config import Config

from sqsjobs.testing import RequestCounter
from sqsjobs.testing.counter import service_action
from sqsjobs.testing.wsgi import WsgiApp, request_body

StartResponse = Callable[..., Any]


class Fault(StrEnum):
    THROTTLE = "throttle"
    SERVER_ERROR = "server_error"
    DROP = "drop"
    LOST_RESPONSE = "lost_response"
    APPLIED_ERROR = "applied_error"
    DENIED = "denied"  # an error botocore does not retry (IAM said no): fails at once
    SLOW = "slow"  # served in full, ``FaultPlan.delay`` seconds late
    CODED = "coded"  # not applied: ``FaultPlan.code`` with HTTP ``FaultPlan.status``


BEFORE = frozenset({Fault.THROTTLE, Fault.SERVER_ERROR, Fault.DROP, Fault.DENIED, Fault.CODED})
# What a random plan injects unless told otherwise: failures a retry may get past.
TRANSIENT = tuple(fault for fault in Fault if fault not in (Fault.DENIED, Fault.SLOW, Fault.CODED))
AFTER = frozenset({Fault.LOST_RESPONSE, Fault.APPLIED_ERROR})

JSON_NAMESPACES = {"dynamodb": "com.amazonaws.dynamodb.v20120810", "sqs": "com.amazonaws.sqs"}
THROTTLING_CODES = {
    "dynamodb": "ProvisionedThroughputExceededException",
    "sqs": "ThrottlingException",
}
SERVER_ERROR_CODES = {"dynamodb": "InternalServerError", "sqs": "InternalError"}
DENIED_CODES = {"dynamodb": "AccessDeniedException", "sqs": "AccessDenied"}
# Clients whose user agent carries this are never faulted: a test's own reads of the
# table and queues, which observe the system and are no part of it.
OBSERVER = "sqsjobs-test-observer"
OBSERVER_CONFIG = Config(user_agent_extra=OBSERVER, retries={"mode": "standard"})


@dataclass(frozen=True)
class FaultPlan:
    """Which requests fail, and how."""

    rate: float = 0.0  # fraction of eligible requests (random mode)
    seed: int = 0
    kinds: tuple[Fault, ...] = TRANSIENT
    services: frozenset[str] = frozenset({"dynamodb", "sqs"})
    actions: frozenset[str] | None = None  # None: every action of those services
    first_attempts: bool = False  # fault every first attempt instead of a random fraction
    limit: int | None = None  # inject at most this many faults, then let every request pass
    delay: float = 0.3  # how late a SLOW request is answered
    body_contains: str | None = None  # only requests whose body has this text are eligible
    first: tuple[Fault, ...] = ()  # the first eligible requests get these, in order
    code: str = "ValidationException"  # what a CODED fault answers (any AWS error code)
    status: int = 400  # and with which HTTP status


class FaultInjector(RequestCounter):
    """Counts requests like ``RequestCounter`` and fails some of them per its ``FaultPlan``."""

    def __init__(self) -> None:
        super().__init__()
        self._plan: FaultPlan | None = None
        self.delay = 0.0
        self.coded = ("ValidationException", 400)
        self._random = random.Random(0)
        self._decide = threading.Lock()
        self.injected: Counter[tuple[str, str, Fault]] = Counter()
        self.eligible: Counter[tuple[str, str]] = Counter()
        self.faulted = threading.Event()  # set once a fault was chosen (a test waits on it)

    def start(self, plan: FaultPlan) -> None:
        """Inject faults per ``plan`` from now on; the counts start again with it."""
        with self._decide:
            self._plan = plan
            self.delay = plan.delay
            self.coded = (plan.code, plan.status)
            self._random = random.Random(plan.seed)
            self.injected.clear()
            self.eligible.clear()
            self.faulted.clear()

    def stop(self) -> None:
        """No more faults; the counts stay for ``summary``."""
        with self._decide:
            self._plan = None

    @contextmanager
    def faults(self, plan: FaultPlan) -> Iterator[FaultInjector]:
        """Inject faults per ``plan`` inside the block."""
        self.start(plan)
        try:
            yield self
        finally:
            self.stop()

    def summary(self) -> str:
        total = sum(self.eligible.values())
        kinds = Counter(kind for (_, _, kind) in self.injected.elements())
        faulted = sum(kinds.values())
        rate = faulted / total if total else 0.0
        mix = ", ".join(f"{kind.value} {kinds[kind]}" for kind in Fault if kinds[kind])
        return f"{faulted} faults in {total} requests ({rate:.1%}): {mix or 'none'}"

    def wrap(self, app: WsgiApp) -> WsgiApp:
        counted = super().wrap(app)

        def faulty(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
            service, action = service_action(environ)
            fault = self._choose(service, action, environ)
            if fault is None:
                return counted(environ, start_response)
            if fault is Fault.SLOW:
                time.sleep(self.delay)
                return counted(environ, start_response)
            if fault in AFTER:
                _apply(counted, environ)
            else:
                _discard_body(environ)
            if fault in (Fault.DROP, Fault.LOST_RESPONSE):
                _drop(environ)
            status, headers, body = _error(service, environ, fault, self.coded)
            start_response(status, headers)
            return [body]

        return faulty

    def _choose(self, service: str, action: str, environ: dict[str, Any]) -> Fault | None:
        if OBSERVER in str(environ.get("HTTP_USER_AGENT", "")):
            return None
        with self._decide:
            plan = self._plan
            if plan is None or service not in plan.services:
                return None
            if plan.actions is not None and action not in plan.actions:
                return None
            if plan.body_contains is not None and plan.body_contains not in _text(environ):
                return None
            self.eligible[(service, action)] += 1
            if plan.limit is not None and self.injected.total() >= plan.limit:
                return None
            fault = self._fault(plan, environ)
            if fault is not None:
                self.injected[(service, action, fault)] += 1
                self.faulted.set()
            return fault

    def _fault(self, plan: FaultPlan, environ: dict[str, Any]) -> Fault | None:
        """The fault for an eligible request: the next of ``first``, else the plan's rule."""
        leading = self.injected.total()
        if leading < len(plan.first):
            return plan.first[leading]
        if plan.first_attempts:
            attempt = str(environ.get("HTTP_AMZ_SDK_REQUEST", "attempt=1"))
            hit = attempt.split(";")[0].strip() == "attempt=1"
        else:
            hit = self._random.random() < plan.rate
        return self._random.choice(plan.kinds) if hit else None


def _text(environ: dict[str, Any]) -> str:
    """The request's body as text, put back for whoever reads it next."""
    return request_body(environ).decode("utf-8", "replace")


def _apply(app: WsgiApp, environ: dict[str, Any]) -> None:
    """Let moto serve the request in full, then forget its response."""

    def ignore(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        return lambda data: None

    result = app(environ, ignore)
    try:
        for _ in result:
            pass
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()


def _discard_body(environ: dict[str, Any]) -> None:
    """Read the body of a request moto will not see, as moto would have.

    Left unread, werkzeug would take it for the next request on the connection.
    """
    environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))


def _drop(environ: dict[str, Any]) -> None:
    """Close the client's connection with no response; werkzeug then drops the request."""
    connection: socket.socket = environ["werkzeug.socket"]
    connection.shutdown(socket.SHUT_RDWR)
    raise ConnectionAbortedError("fault injection: connection dropped")


def _error(
    service: str, environ: dict[str, Any], fault: Fault, coded: tuple[str, int]
) -> tuple[str, list[tuple[str, str]], bytes]:
    """A throttling or denied error (400), an internal error (500) or a CODED one, in the
    client's protocol."""
    throttled = fault is Fault.THROTTLE
    sender = fault in (Fault.THROTTLE, Fault.DENIED)  # the client's fault: HTTP 400
    status = "400 Bad Request" if sender else "500 Internal Server Error"
    if fault is Fault.CODED:
        sender = coded[1] < 500
        status = f"{coded[1]} {HTTPStatus(coded[1]).phrase}"
    request_id = str(uuid.uuid4())
    if environ.get("HTTP_X_AMZ_TARGET"):  # JSON 1.0 protocol: DynamoDB, and SQS on botocore 1.40
        codes = _codes(fault)
        code = codes.get(service, "ThrottlingException" if throttled else "InternalFailure")
        code = coded[0] if fault is Fault.CODED else code
        namespace = JSON_NAMESPACES.get(service, "com.amazonaws")
        body = json.dumps({"__type": f"{namespace}#{code}", "message": f"fault injection: {fault}"})
        headers = [
            ("Content-Type", "application/x-amz-json-1.0"),
            ("x-amzn-RequestId", request_id),
        ]
        if service == "sqs":  # SQS's JSON errors also carry the query protocol's code
            fault_side = "Sender" if sender else "Receiver"
            headers.append(("x-amzn-query-error", f"{code};{fault_side}"))
        return status, headers, body.encode()
    code = {Fault.THROTTLE: "Throttling", Fault.DENIED: "AccessDenied"}.get(
        fault, coded[0] if fault is Fault.CODED else "InternalFailure"
    )
    fault_side = "Sender" if sender else "Receiver"
    body = (
        '<ErrorResponse xmlns="https://aws.amazon.com/">'
        f"<Error><Type>{fault_side}</Type><Code>{code}</Code>"
        f"<Message>fault injection: {fault}</Message></Error>"
        f"<RequestId>{request_id}</RequestId></ErrorResponse>"
    )
    return status, [("Content-Type", "text/xml"), ("x-amzn-RequestId", request_id)], body.encode()


def _codes(fault: Fault) -> dict[str, str]:
    if fault is Fault.THROTTLE:
        return THROTTLING_CODES
    return DENIED_CODES if fault is Fault.DENIED else SERVER_ERROR_CODES
