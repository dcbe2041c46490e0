"""What DynamoDB on-demand bills for a request, from the item's images: a pure cost model.

Its one job is arithmetic on DynamoDB JSON items (``{"name": {"S": "text"}}``); the
emulator's meter (``sqsjobs.testing.meter``) feeds it the before and after images of
every write it serves. Stdlib only, no clock, no I/O, and nothing on the Lambda or
producer import path imports it.

The rules, from the DynamoDB Developer Guide:

- **Item size** ("DynamoDB item sizes and formats",
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
  the sum over attributes of the name's UTF-8 bytes plus the value's size. A string is
  its UTF-8 bytes; a binary its raw bytes; a number 1 byte per two significant digits
  (leading and trailing zeroes trimmed) plus 1; null and boolean 1 byte; a list or map
  3 bytes plus 1 byte per element plus its elements (a map's keys count like names); a
  set the sum of its elements. The 100 bytes of per-item index overhead are storage
  only and do not count here.
- **Units** ("DynamoDB read and write operations",
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html,
  sections "Capacity unit consumption for write operations" and "... for read
  operations"): a write costs 1 WRU per KB (1,024 bytes, rounded up, at least 1) of the
  larger of the item's before and after images; a delete of a missing item still costs
  1. A read costs 1 RRU per 4 KB (rounded up, at least 1) when strongly consistent,
  half that when eventually consistent; ``BatchGetItem`` rounds each item, ``Query``
  and ``Scan`` round the sum over the items *evaluated* (before any filter, so a
  ``Select=COUNT`` query pays for every item it counts); transactional reads and writes
  cost twice as much.
- **Failed conditional writes**: the same page says a write whose condition is false
  still consumes write capacity from the table, sized by the larger of the existing
  item and the item the request would have written (at least 1 WRU); nothing is
  written, so no index is charged. For ``UpdateItem`` and ``DeleteItem`` the would-be
  image is not known without evaluating the update, so the existing item sizes it.
  ``ReturnValuesOnConditionCheckFailure`` adds no read.
- **Global secondary indexes** ("Global secondary indexes in DynamoDB", its section on
  provisioned throughput for writes,
  https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes):
  an item is in an index only when it has every index key attribute. Per index, a write costs
  nothing when the item is in it neither before nor after, one write when it enters or
  leaves it, two (delete the old entry, put the new one) when an index key attribute
  changes, one when only projected non-key attributes change, and nothing when nothing
  projected changed. Each index write is sized by the projected image (table and index
  keys plus the projected attributes), the larger of the two images for an update in
  place.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, NamedTuple

__all__ = [
    "Charge",
    "Index",
    "Schema",
    "attribute_size",
    "dollars_per_million_jobs",
    "index_image",
    "item_size",
    "partition_text",
    "read_units",
    "write_charges",
    "write_units",
]

Item = Mapping[str, Mapping[str, Any]]
Projection = Literal["ALL", "KEYS_ONLY", "INCLUDE"]

KB = 1024
READ_BLOCK = 4 * KB

# us-east-1 list prices, dollars per million: DynamoDB on-demand write and read request
# units (after the November 2024 reduction) and SQS standard requests (64 KB chunks).
WRU_PRICE = 0.625
RRU_PRICE = 0.125
SQS_PRICE = 0.40


class Index(NamedTuple):
    """A global secondary index: its key attributes (partition first) and projection."""

    name: str
    keys: tuple[str, ...]
    projection: Projection = "ALL"
    include: frozenset[str] = frozenset()


class Schema(NamedTuple):
    """A table: its name, key attributes (partition first) and global secondary indexes."""

    table: str
    keys: tuple[str, ...]
    indexes: tuple[Index, ...] = ()


class Charge(NamedTuple):
    """One write to the table (``index_name`` None) or to one index, and the partition it hits.

    ``partition`` is the written item's partition key value (of the index, for an index
    write) as text, so per-partition loads can be summed."""

    index_name: str | None
    partition: str
    units: int
    kind: Literal["put", "delete", "update", "refused", "check"]


def attribute_size(value: Mapping[str, Any]) -> int:
    """The size of one attribute value in bytes, without its name."""
    (kind, content), *rest = value.items()
    if rest:
        raise ValueError(f"an attribute value has exactly one type, not {sorted(value)}")
    if kind in _SCALARS:
        return _SCALARS[kind](content)
    if kind in _SETS:
        return sum(_SCALARS[_SETS[kind]](element) for element in content)
    if kind == "L":
        return 3 + sum(1 + attribute_size(element) for element in content)
    if kind == "M":
        return 3 + sum(1 + _named_size(name, element) for name, element in content.items())
    raise ValueError(f"unknown attribute type {kind!r}: S, N, B, BOOL, NULL, SS, NS, BS, L, M")


def item_size(item: Item | None) -> int:
    """An item's size in bytes (0 for no item)."""
    if item is None:
        return 0
    return sum(_named_size(name, value) for name, value in item.items())


def write_units(size: int) -> int:
    """WRU for writing an item of ``size`` bytes: per KB, rounded up, at least one."""
    return max(1, math.ceil(size / KB))


def read_units(sizes: Iterable[int], *, consistent: bool, each: bool = False) -> float:
    """RRU for reading items of these sizes in one request.

    ``each`` rounds every item up to 4 KB (``GetItem``, ``BatchGetItem``); otherwise the
    sum is rounded (``Query``, ``Scan``). At least one unit (half, eventually consistent).
    """
    sizes = list(sizes)
    if each:
        blocks = sum(max(1, math.ceil(size / READ_BLOCK)) for size in sizes)
    else:
        blocks = math.ceil(sum(sizes) / READ_BLOCK)
    blocks = max(1, blocks)
    return float(blocks) if consistent else blocks / 2


def index_image(schema: Schema, index: Index, item: Item | None) -> dict[str, Any] | None:
    """The item's entry in ``index``, or None when the item is not in it (sparse)."""
    if item is None or any(key not in item for key in index.keys):
        return None
    if index.projection == "ALL":
        return dict(item)
    kept = set(schema.keys) | set(index.keys)
    if index.projection == "INCLUDE":
        kept |= index.include
    return {name: value for name, value in item.items() if name in kept}


def write_charges(
    schema: Schema,
    before: Item | None,
    after: Item | None,
    *,
    succeeded: bool,
    attempted: Item | None = None,
) -> list[Charge]:
    """The writes one item write costs, table first, then each index in schema order.

    ``before`` and ``after`` are the stored item before and after the request (None when
    absent); ``attempted`` is the item a refused ``PutItem`` would have written.
    """
    image = after if after is not None else before
    partition = partition_text(image or attempted, schema.keys[0])
    if not succeeded:
        size = max(item_size(before), item_size(attempted))
        return [Charge(None, partition, write_units(size), "refused")]
    kind: Literal["put", "delete", "update"] = (
        "delete" if after is None else "put" if before is None else "update"
    )
    charges = [Charge(None, partition, write_units(max(item_size(before), item_size(after))), kind)]
    for index in schema.indexes:
        charges += _index_charges(
            index, index_image(schema, index, before), index_image(schema, index, after)
        )
    return charges


def _index_charges(
    index: Index, old: dict[str, Any] | None, new: dict[str, Any] | None
) -> list[Charge]:
    name, key = index.name, index.keys[0]
    if old is None and new is None:
        return []
    if old is None:
        assert new is not None
        return [Charge(name, partition_text(new, key), write_units(item_size(new)), "put")]
    if new is None:
        return [Charge(name, partition_text(old, key), write_units(item_size(old)), "delete")]
    if any(old[part] != new[part] for part in index.keys):
        return [
            Charge(name, partition_text(old, key), write_units(item_size(old)), "delete"),
            Charge(name, partition_text(new, key), write_units(item_size(new)), "put"),
        ]
    if old == new:
        return []
    size = max(item_size(old), item_size(new))
    return [Charge(name, partition_text(new, key), write_units(size), "update")]


def dollars_per_million_jobs(wru: float, rru: float, sqs_requests: float) -> float:
    """List-price dollars for a million jobs that each cost these units and requests."""
    return wru * WRU_PRICE + rru * RRU_PRICE + sqs_requests * SQS_PRICE


_SCALARS: dict[str, Callable[[Any], int]] = {
    "S": lambda text: len(str(text).encode("utf-8")),
    "N": lambda number: _number_size(str(number)),
    "B": lambda data: len(_raw(data)),
    "BOOL": lambda _: 1,
    "NULL": lambda _: 1,
}
_SETS = {"SS": "S", "NS": "N", "BS": "B"}


def _named_size(name: str, value: Mapping[str, Any]) -> int:
    return len(name.encode("utf-8")) + attribute_size(value)


def _number_size(text: str) -> int:
    """1 byte per two significant digits, plus 1: ``1000``, ``0.001`` and ``1E3`` have one."""
    mantissa = text.strip().lstrip("+-").lower().partition("e")[0]
    digits = mantissa.replace(".", "").lstrip("0").rstrip("0")
    return math.ceil(len(digits) / 2) + 1


def _raw(data: Any) -> bytes:
    """A binary value as the wire carries it (base64 text) or as bytes."""
    if isinstance(data, bytes):
        return data
    return base64.b64decode(str(data))


def partition_text(item: Item | None, key: str) -> str:
    """The value of ``item``'s ``key`` attribute as text ("" when absent), to name a partition."""
    if item is None or key not in item:
        return ""
    (content,) = item[key].values()
    return str(content)
