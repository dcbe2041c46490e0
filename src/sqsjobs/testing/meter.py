"""A billing meter for the local AWS emulator: every DynamoDB request it serves, as billed.

``local_aws(meter=BillingMeter())`` puts the meter in front of moto's DynamoDB, inside
the lock that serves DynamoDB requests one at a time. While a ``meter.record()`` block is
open, each write is bracketed by two uncounted ``GetItem``s of the items it names (the
before and after images) and each read by a re-read of what it evaluated; the images
go through the pure cost model in ``sqsjobs.testing.billing``. Outside a recording the
meter only passes requests on.

Why requests to the emulator rather than moto's backend objects: the meter then relies
only on the DynamoDB wire protocol (``DescribeTable``, ``GetItem``, ``Query``), which
moto keeps compatible with AWS, not on moto's internal classes, which change between
releases; and it sees the table exactly as clients do. Because DynamoDB requests are
already served one at a time, nothing can change an item between the meter's reads and
the request itself, so the images are exact. The extra requests are not seen by
``RequestCounter`` (which wraps outside the lock), so request budgets stay exact.

Batch and transactional writes are priced item by item (transactions at twice the
units); a cancelled transaction bills each of its items like a refused conditional
write, and a request the emulator rejects as invalid bills nothing, as on AWS.

Reads are re-run without their filter and projection (``Limit`` applies before a filter,
so the same ``Limit`` and start key evaluate the same items) to size what AWS bills:
the items evaluated, whole, as stored in the table or the index.
"""

from __future__ import annotations

import io
import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from .billing import (
    Charge,
    Index,
    Item,
    Schema,
    item_size,
    partition_text,
    read_units,
    write_charges,
    write_units,
)
from .wsgi import WsgiApp, request_body

__all__ = ["BillingMeter", "Read", "Write", "totals"]

WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})
READS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"})
TARGET = "DynamoDB_20120810"
_TOKEN = re.compile(r"[#:][A-Za-z0-9_]+")
_DROPPED = (
    "FilterExpression",
    "QueryFilter",
    "ScanFilter",
    "ProjectionExpression",
    "AttributesToGet",
    "Select",
    "ReturnConsumedCapacity",
    "ConditionalOperator",
)


class Write(NamedTuple):
    """One item write as billed: its images and the writes it cost (table, then indexes)."""

    table: str
    action: str
    succeeded: bool
    before: Item | None
    after: Item | None
    charges: tuple[Charge, ...]

    @property
    def units(self) -> int:
        return sum(charge.units for charge in self.charges)


class Read(NamedTuple):
    """One read request as billed: the items it evaluated and the RRU they cost."""

    table: str
    action: str
    index_name: str | None
    evaluated: int
    units: float


class _Unreadable(Exception):
    """The meter could not read what a request names (the emulator refused its read)."""


_UNREADABLE = (_Unreadable, KeyError, TypeError, AttributeError)


class _Response(NamedTuple):
    status: int
    error: str
    data: dict[str, Any]


class BillingMeter:
    """Records, while a ``record()`` block is open, what each DynamoDB request bills."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._recordings: list[list[Write | Read]] = []
        self._schemas: dict[str, Schema] = {}

    @contextmanager
    def record(self) -> Iterator[list[Write | Read]]:
        """Collect the records of every request served until the block ends."""
        records: list[Write | Read] = []
        with self._lock:
            self._recordings.append(records)
        try:
            yield records
        finally:
            with self._lock:
                self._recordings.remove(records)

    def wrap(self, app: WsgiApp) -> WsgiApp:
        def metered(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
            action = target.partition(".")[2]
            if not self._recordings or not target.startswith("DynamoDB"):
                return app(environ, start_response)
            if action not in WRITES | READS:
                return app(environ, start_response)
            session = _Session(app, environ, self._schemas)
            body, records = session.serve(action, start_response)
            with self._lock:
                for recording in self._recordings:
                    recording.extend(records)
            return body

        return metered


def totals(records: list[Write | Read]) -> tuple[int, float]:
    """WRU and RRU of these records."""
    wru = sum(record.units for record in records if isinstance(record, Write))
    rru = sum(record.units for record in records if isinstance(record, Read))
    return wru, rru


class _Session:
    """One metered request: the request itself and the meter's reads around it."""

    def __init__(self, app: WsgiApp, environ: dict[str, Any], schemas: dict[str, Schema]):
        self._app = app
        self._request = json.loads(request_body(environ) or b"{}")
        self._pristine = dict(environ)
        self._environ = environ
        self._schemas = schemas

    def serve(self, action: str, start_response: Callable[..., Any]) -> tuple[Any, list[Any]]:
        """Serve the request; its records, none when it was invalid (AWS bills none).

        A request that names no table or key the meter can read (a missing table, a
        malformed item) goes on unmetered, so the client sees the emulator's own error.
        """
        if action in READS:
            captured = self._pass_on(start_response)
            try:
                records: list[Any] = self._reads(action)
            except _UNREADABLE:
                records = []
            return captured, records
        try:
            targets = self._write_targets(action)
            befores = [self._item(table, key) for table, key, _, _ in targets]
        except _UNREADABLE:
            return self._pass_on(start_response), []
        status: list[str] = []

        def capture(code: str, headers: Any, exc_info: Any = None) -> Any:
            status.append(code)
            return start_response(code, headers, exc_info)

        body = list(self._app(self._environ, capture))
        response = _parse(b"".join(body), status)
        afters = [self._item(table, key) for table, key, _, _ in targets]
        return body, self._writes(action, targets, befores, afters, response)

    def _pass_on(self, start_response: Callable[..., Any]) -> list[bytes]:
        return list(self._app(self._environ, start_response))

    def _writes(
        self,
        action: str,
        targets: list[tuple[str, Item, Item | None, str]],
        befores: list[Item | None],
        afters: list[Item | None],
        response: _Response,
    ) -> list[Write]:
        refused = response.error in (
            "ConditionalCheckFailedException",
            "TransactionCanceledException",
        )
        if response.status != 200 and not refused:
            return []  # a request refused as invalid writes nothing and is not billed
        factor = 2 if action == "TransactWriteItems" else 1
        records = []
        for (table, _, attempted, kind), before, after in zip(
            targets, befores, afters, strict=True
        ):
            schema = self._schema(table)
            if kind == "ConditionCheck":
                units = write_units(item_size(before))
                key = partition_text(before, schema.keys[0])
                charges = [Charge(None, key, units, "check")]
            else:
                charges = write_charges(
                    schema, before, after, succeeded=not refused, attempted=attempted
                )
            doubled = tuple(charge._replace(units=charge.units * factor) for charge in charges)
            records.append(Write(table, action, not refused, before, after, doubled))
        return records

    def _write_targets(self, action: str) -> list[tuple[str, Item, Item | None, str]]:
        """(table, key, item a put would write, kind) for each item the write names."""
        request = self._request
        if action in ("PutItem", "UpdateItem", "DeleteItem"):
            return [self._target(request["TableName"], request, action.removesuffix("Item"))]
        if action == "BatchWriteItem":
            return [
                self._target(table, entry["PutRequest"], "Put")
                if "PutRequest" in entry
                else self._target(table, entry["DeleteRequest"], "Delete")
                for table, entries in request.get("RequestItems", {}).items()
                for entry in entries
            ]
        return [
            self._target(part["TableName"], part, kind)
            for entry in request.get("TransactItems", [])
            for kind, part in entry.items()
        ]

    def _target(
        self, table: str, part: dict[str, Any], kind: str
    ) -> tuple[str, Item, Item | None, str]:
        if "Key" in part:
            return table, part["Key"], None, kind
        item = part["Item"]
        return table, {key: item[key] for key in self._schema(table).keys}, item, kind

    def _reads(self, action: str) -> list[Read]:
        request = self._request
        if action in ("Query", "Scan"):
            return [self._evaluated(action, request)]
        if action == "GetItem":
            parts = [(request["TableName"], [request["Key"]], bool(request.get("ConsistentRead")))]
        elif action == "BatchGetItem":
            parts = [
                (table, asked.get("Keys", []), bool(asked.get("ConsistentRead")))
                for table, asked in request.get("RequestItems", {}).items()
            ]
        else:
            parts = [
                (entry["Get"]["TableName"], [entry["Get"]["Key"]], True)
                for entry in request.get("TransactItems", [])
            ]
        factor = 2 if action == "TransactGetItems" else 1
        records = []
        for table, keys, consistent in parts:
            sizes = [item_size(self._item(table, key)) for key in keys]
            units = read_units(sizes, consistent=consistent, each=True) * factor
            records.append(Read(table, action, None, len(keys), units))
        return records

    def _evaluated(self, action: str, request: dict[str, Any]) -> Read:
        """A Query or Scan re-run for what it evaluates: no filter, no projection."""
        plain = {name: value for name, value in request.items() if name not in _DROPPED}
        index = request.get("IndexName")
        plain["Select"] = "ALL_PROJECTED_ATTRIBUTES" if index else "ALL_ATTRIBUTES"
        used = set(_TOKEN.findall(str(plain.get("KeyConditionExpression", ""))))
        for field in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
            kept = {token: value for token, value in plain.pop(field, {}).items() if token in used}
            if kept:
                plain[field] = kept
        items = self._call(action, plain).data.get("Items", [])
        consistent = bool(request.get("ConsistentRead"))
        units = read_units([item_size(item) for item in items], consistent=consistent)
        return Read(request["TableName"], action, index, len(items), units)

    def _item(self, table: str, key: Item) -> Item | None:
        response = self._call("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True})
        item: Item | None = response.data.get("Item")
        return item

    def _schema(self, table: str) -> Schema:
        if table not in self._schemas:
            self._schemas[table] = _schema(self._call("DescribeTable", {"TableName": table}).data)
        return self._schemas[table]

    def _call(self, action: str, request: dict[str, Any]) -> _Response:
        data = json.dumps(request).encode("utf-8")
        environ = dict(self._pristine)
        environ.update(
            {
                "HTTP_X_AMZ_TARGET": f"{TARGET}.{action}",
                "CONTENT_LENGTH": str(len(data)),
                "wsgi.input": io.BytesIO(data),
            }
        )
        status: list[str] = []

        def capture(code: str, headers: Any, exc_info: Any = None) -> Callable[[bytes], None]:
            status.append(code)
            return lambda _: None

        response = _parse(b"".join(self._app(environ, capture)), status)
        if response.status != 200:
            raise _Unreadable(f"the billing meter's {action} failed: {response.error}")
        return response


def _parse(body: bytes, status: list[str]) -> _Response:
    """The status code, error type (``ConditionalCheckFailedException``) and JSON body."""
    try:
        data = json.loads(body or b"{}")
    except ValueError:  # not a DynamoDB reply (an emulator crash page)
        data = {}
    error = str(data.get("__type", "")).rpartition("#")[2] if isinstance(data, dict) else ""
    return _Response(int(status[0].split()[0]), error, data)


def _schema(description: dict[str, Any]) -> Schema:
    table = description["Table"]
    indexes = tuple(
        Index(
            index["IndexName"],
            _keys(index["KeySchema"]),
            index["Projection"]["ProjectionType"],
            frozenset(index["Projection"].get("NonKeyAttributes", [])),
        )
        for index in table.get("GlobalSecondaryIndexes", [])
    )
    return Schema(table["TableName"], _keys(table["KeySchema"]), indexes)


def _keys(schema: list[dict[str, str]]) -> tuple[str, ...]:
    """Key attribute names, partition key first."""
    ordered = sorted(schema, key=lambda part: part["KeyType"] != "HASH")
    return tuple(part["AttributeName"] for part in ordered)
