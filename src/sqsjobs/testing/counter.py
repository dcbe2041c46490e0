"""Counting what the emulator serves, by service and action: request budgets as exact counts.

Counts are deterministic where durations are not, so tests assert them (never times).
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .wsgi import WsgiApp, request_body

DYNAMODB_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem"})
DYNAMODB_BATCH_WRITES = frozenset({"BatchWriteItem", "TransactWriteItems"})
DYNAMODB_READS = frozenset(
    {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "ExecuteStatement"}
)


@dataclass(frozen=True)
class RequestCounts:
    """Requests by ``(service, action)``, and DynamoDB items written and read requests."""

    requests: Counter[tuple[str, str]]
    dynamodb_writes: int
    dynamodb_reads: int

    @classmethod
    def none(cls) -> RequestCounts:
        """No requests: the start of a sum."""
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
        """The requests to service ``name`` (``"sqs"``, ``"dynamodb"``), every action."""
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
        """What was served so far; subtract an earlier count for what came between."""
        with self._lock:
            return RequestCounts(Counter(self._requests), self._writes, self._reads)

    def wrap(self, app: WsgiApp) -> WsgiApp:
        """``app`` counting each request it serves; ``local_aws(counter=...)`` wraps it."""

        def counting(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            self._observe(environ)
            return app(environ, start_response)

        return counting

    def _observe(self, environ: dict[str, Any]) -> None:
        service, action = service_action(environ)
        written = 0
        if service == "dynamodb" and action in DYNAMODB_WRITES:
            written = 1
        elif service == "dynamodb" and action in DYNAMODB_BATCH_WRITES:
            written = _items_in(request_body(environ), action)
        with self._lock:
            self._requests[(service, action)] += 1
            self._writes += written
            self._reads += service == "dynamodb" and action in DYNAMODB_READS


def service_action(environ: dict[str, Any]) -> tuple[str, str]:
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
    form = urllib.parse.parse_qs(request_body(environ).decode("utf-8", "replace"))
    return form.get("Action", [""])[0]


def _items_in(data: bytes, action: str) -> int:
    request = json.loads(data or b"{}")
    if action == "TransactWriteItems":
        return len(request.get("TransactItems", []))
    return sum(len(writes) for writes in request.get("RequestItems", {}).values())
