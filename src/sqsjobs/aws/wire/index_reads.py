"""Builders for the reads behind listing, stats and the reconciler.

A range is one partition of a list index and a span of its sort key: of ``by_queue``,
one queue's shard (``list_pk``) and a ``list_sk`` span (after a cursor, before a
cutoff); of the previous layout's ``by_status``, one (status, shard) partition and one
queue's ``gsi_sk`` span. Their cost grows with the shard count (docs/explanation/scaling.md).

``by_queue`` projects no status and no payload, so a reader that needs them fetches the
records a page points at with ``BatchGetItem`` (``get_records``), eventually consistent:
listing is a snapshot anyway, and every write that acts on what it read is conditional.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .conditions import attribute_names
from .index_keys import INDEX, LEGACY_INDEX
from .items import text
from .protocol import Call

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import BatchGetItemInputTypeDef, QueryInputTypeDef

BATCH_GET_LIMIT = 100  # keys per BatchGetItem request
FIRST_KEY = "!"  # sorts before every sort key (DynamoDB refuses an empty bound)
LAST_KEY = "~"  # sorts after every ``list_sk``: "~" follows digits and "#"


class ListIndex(NamedTuple):
    """An index's name and its key attributes."""

    name: str
    partition_key: str
    sort_key: str


CURRENT = ListIndex(INDEX, "list_pk", "list_sk")
PREVIOUS = ListIndex(LEGACY_INDEX, "gsi_pk", "gsi_sk")


def query_index(
    table: str,
    index: ListIndex,
    partition: str,
    low: str,
    high: str,
    *,
    limit: int | None,
    start: Mapping[str, Any] | None,
    filter: str | None = None,
    values: Mapping[str, Any] | None = None,
    forward: bool = True,
) -> Call:
    """One page of an index partition, ``low <= sort key <= high``, oldest first, or
    newest first when not ``forward`` (``LastEvaluatedKey`` is then the lowest key read)."""
    params = _index_range(table, index, partition, low, high, start, filter, values)
    if limit is not None:
        params["Limit"] = limit
    params["ScanIndexForward"] = forward
    return Call("dynamodb", "query", params)


def count_index(
    table: str,
    index: ListIndex,
    partition: str,
    low: str,
    high: str,
    *,
    start: Mapping[str, Any] | None,
    filter: str | None = None,
    values: Mapping[str, Any] | None = None,
) -> Call:
    """How many items of an index range match ``filter`` (``Select=COUNT``), one page.

    A page stops after 1 MB of items read, so a large range needs ``LastEvaluatedKey``.
    """
    params = _index_range(table, index, partition, low, high, start, filter, values)
    params["Select"] = "COUNT"
    return Call("dynamodb", "query", params)


def get_records(table: str, keys: Sequence[Mapping[str, Any]], *, consistent: bool = False) -> Call:
    """Up to ``BATCH_GET_LIMIT`` items by key; ``UnprocessedKeys`` must be asked again."""
    if not 0 < len(keys) <= BATCH_GET_LIMIT:
        raise ValueError(f"a BatchGetItem takes 1 to {BATCH_GET_LIMIT} keys, not {len(keys)}")
    params: BatchGetItemInputTypeDef = {
        "RequestItems": {table: {"Keys": [dict(key) for key in keys], "ConsistentRead": consistent}}
    }
    return Call("dynamodb", "batch_get_item", params)


def _not_in_current(filter: str | None) -> str:
    """``filter`` for ``by_status``, leaving out records that ``by_queue`` also lists.

    Record format 1 writes both indexes' keys (0.1 readers look in ``by_status``); a
    reader of both reads such a record through ``by_queue`` alone, never twice. The test
    is on the sort key, which only a put writes: a status change may set ``list_pk`` on
    a record of 0.1 (``dynamo.status_change``), which leaves it in ``by_status`` alone.
    """
    alone = f"attribute_not_exists(#{CURRENT.sort_key})"
    if not filter:
        return alone
    # DynamoDB refuses redundant parentheses, so only a top-level OR gets them.
    return f"({filter}) AND {alone}" if _top_level_or(filter) else f"{filter} AND {alone}"


def _top_level_or(expression: str) -> bool:
    depth = 0
    for i, char in enumerate(expression):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and expression.startswith(" OR ", i):
            return True
    return False


def _index_range(
    table: str,
    index: ListIndex,
    partition: str,
    low: str,
    high: str,
    start: Mapping[str, Any] | None,
    filter: str | None,
    values: Mapping[str, Any] | None,
) -> QueryInputTypeDef:
    key = f"#{index.partition_key} = :partition AND #{index.sort_key} BETWEEN :low AND :high"
    if index is PREVIOUS:
        filter = _not_in_current(filter)
    params: QueryInputTypeDef = {
        "TableName": table,
        "IndexName": index.name,
        "KeyConditionExpression": key,
        "ExpressionAttributeNames": attribute_names(key, filter or ""),
        "ExpressionAttributeValues": {
            ":partition": text(partition),
            ":low": text(low),
            ":high": text(high),
            **(values or {}),
        },
    }
    if filter:
        params["FilterExpression"] = filter
    if start is not None:
        params["ExclusiveStartKey"] = start
    return params
