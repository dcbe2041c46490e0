"""Calls, flows and the two drivers that run a flow against AWS (or a script, in tests).

A *flow* is a generator that yields what it needs done and receives the reply:

- ``yield Call(...)`` sends one request; the reply is botocore's response dict, or the
  failure is thrown into the flow as an ``AwsError`` (``ConditionFailed`` for a refused
  conditional write), so a flow reads like ordinary code with ``try``/``except``;
- ``yield Parallel(calls)`` sends several independent requests; the reply is a list with,
  per call, its response dict or its ``AwsError`` (nothing is thrown), because a batch of
  conditional claims expects some of them to be refused.

``drive`` runs a flow on a blocking ``send`` (boto3), ``adrive`` on an awaitable one
(aioboto3); they are the only code written twice. The transports below turn botocore's
``ClientError`` into ``AwsError`` in ``translate``, the one place that knows AWS error
codes, and a request that got no response at all (its retries spent) in
``no_response``. ``AwsError`` never leaves ``sqsjobs.aws``: the store re-raises the
botocore error it carries (``public_error``), so callers see the familiar exception.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Generator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import boto3  # type: ignore[import-untyped]
import botocore.session  # type: ignore[import-untyped]
from botocore.config import Config  # type: ignore[import-untyped]
from botocore.exceptions import ClientError, HTTPClientError  # type: ignore[import-untyped]
from botocore.exceptions import ConnectionError as BotoConnectionError

T = TypeVar("T")
MAX_PARALLEL = 10  # threads the blocking driver uses for one Parallel step

Service = Literal["dynamodb", "sqs", "cloudformation"]
Reply = dict[str, Any]


@dataclass(frozen=True)
class Call:
    """One AWS request: ``getattr(client_for(service), operation)(**params)``."""

    service: Service
    operation: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Parallel:
    """Independent calls a driver may send concurrently; replies come back in order."""

    calls: tuple[Call, ...]


Flow = Generator[Call | Parallel, Any, T]


class AwsError(Exception):
    """A request AWS refused after botocore's own retries; ``cause`` is botocore's error."""

    def __init__(self, code: str, message: str, operation: str, cause: Exception) -> None:
        super().__init__(f"{operation}: {code}: {message}")
        self.code = code
        self.operation = operation
        self.cause = cause


class ConditionFailed(AwsError):
    """A conditional write was refused; ``item`` is the record as it was (ALL_OLD), if any."""

    def __init__(
        self, code: str, message: str, operation: str, cause: Exception, item: Reply | None
    ) -> None:
        super().__init__(code, message, operation, cause)
        self.item = item


class Throttled(AwsError):
    """AWS kept throttling after botocore's retries: back off before trying again."""


THROTTLING_CODES = frozenset(
    {
        "ThrottlingException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "ThrottledException",
    }
)


def translate(error: ClientError, operation: str) -> AwsError:
    """The one place AWS error codes are read."""
    code = str(error.response.get("Error", {}).get("Code", "Unknown"))
    message = str(error.response.get("Error", {}).get("Message", ""))
    if code == "ConditionalCheckFailedException":
        return ConditionFailed(code, message, operation, error, error.response.get("Item"))
    if code in THROTTLING_CODES:
        return Throttled(code, message, operation, error)
    return AwsError(code, message, operation, error)


# What botocore raises when a request got no response at all (a refused or dropped
# connection, a read timeout) and its retries ran out: the standard retry mode's
# transient exceptions. As much an AWS failure as a 5xx, so flows see it as ``AwsError``
# (a batch reports what it wrote, a lost SQS call is left to come back on its own).
NO_RESPONSE: tuple[type[Exception], ...] = (BotoConnectionError, HTTPClientError)


def no_response(error: Exception, operation: str) -> AwsError:
    return AwsError(type(error).__name__, str(error), operation, error)


def public_error(error: AwsError) -> Exception:
    """What a caller outside ``sqsjobs.aws`` sees for an AWS failure: botocore's error."""
    return error.cause


def drive(flow: Flow[T], send: Callable[[Call], Reply]) -> T:
    """Run ``flow`` to its result with a blocking ``send``; ``Parallel`` calls overlap.

    They overlap in threads (boto3 clients are thread-safe; ``BotoTransport`` makes them
    under a lock), so ``SyncJobQueue.enqueue_many``'s ten conditional puts per group take
    about one round trip, as they do on the async face.
    """
    try:
        step = next(flow)
        while True:
            if isinstance(step, Parallel):
                step = flow.send(_in_threads(send, step.calls))
                continue
            try:
                reply = send(step)
            except AwsError as error:
                step = flow.throw(error)
            else:
                step = flow.send(reply)
    except StopIteration as done:
        result: T = done.value
        return result


async def adrive(flow: Flow[T], send: Callable[[Call], Awaitable[Reply]]) -> T:
    """Run ``flow`` to its result with an awaitable ``send``; ``Parallel`` calls overlap."""
    try:
        step = next(flow)
        while True:
            if isinstance(step, Parallel):
                replies = await asyncio.gather(*(_aattempt(send, c) for c in step.calls))
                step = flow.send(list(replies))
                continue
            try:
                reply = await send(step)
            except AwsError as error:
                step = flow.throw(error)
            else:
                step = flow.send(reply)
    except StopIteration as done:
        result: T = done.value
        return result


def _in_threads(send: Callable[[Call], Reply], calls: tuple[Call, ...]) -> list[Reply | AwsError]:
    if len(calls) < 2:
        return [_attempt(send, call) for call in calls]
    with ThreadPoolExecutor(max_workers=min(len(calls), MAX_PARALLEL)) as pool:
        return list(pool.map(lambda call: _attempt(send, call), calls))


def _attempt(send: Callable[[Call], Reply], call: Call) -> Reply | AwsError:
    try:
        return send(call)
    except AwsError as error:
        return error


async def _aattempt(send: Callable[[Call], Awaitable[Reply]], call: Call) -> Reply | AwsError:
    try:
        return await send(call)
    except AwsError as error:
        return error


_models_lock = threading.Lock()
_models: list[Any] = []


def new_session(kind: Callable[[], Any] = botocore.session.Session) -> Any:
    """A fresh botocore session (own credentials and config) on the shared API models.

    Parsing the service models costs ~150 ms per session; they are immutable data, so
    every session in the process shares one loader and a new client costs ~20 ms.
    """
    session = kind()
    with _models_lock:
        if not _models:
            _models.append(botocore.session.get_session().get_component("data_loader"))
        session.register_component("data_loader", _models[0])
    return session


@dataclass(frozen=True)
class Endpoint:
    """Where and how clients connect; ``None`` fields follow boto3's standard chain."""

    endpoint_url: str | None = None
    region_name: str | None = None

    def client_options(self) -> dict[str, Any]:
        """botocore ``Config`` options shared by the boto3 and aioboto3 clients.

        Standard-mode retries handle throttling and transient errors for every call; the
        read timeout leaves room for a 20-second long poll.
        """
        return {
            "retries": {"mode": "standard", "max_attempts": 5},
            "max_pool_connections": 64,
            "read_timeout": 40,
        }


class BotoTransport:
    """Blocking ``send`` over boto3 clients, made on first use and shared by threads."""

    def __init__(self, endpoint: Endpoint) -> None:
        self._endpoint = endpoint
        self._clients: dict[Service, Any] = {}
        self._lock = threading.Lock()

    def client(self, service: Service) -> Any:
        with self._lock:
            client = self._clients.get(service)
            if client is None:
                session = boto3.session.Session(
                    botocore_session=new_session(), region_name=self._endpoint.region_name
                )
                client = session.client(
                    service,
                    endpoint_url=self._endpoint.endpoint_url,
                    config=Config(**self._endpoint.client_options()),
                )
                self._clients[service] = client
            return client

    def __call__(self, call: Call) -> Reply:
        method = getattr(self.client(call.service), call.operation)
        try:
            reply: Reply = method(**call.params)
        except ClientError as error:
            raise translate(error, call.operation) from None
        except NO_RESPONSE as error:
            raise no_response(error, call.operation) from None
        return reply

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
