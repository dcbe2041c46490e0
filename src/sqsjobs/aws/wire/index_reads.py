"""Builders for the queries of the list index ``by_status``: one page, or one count.

A range is one ``gsi_pk`` partition (a status and a shard) and a ``gsi_sk`` span (one
queue's keys, or the part after a cursor). Listing, stats and the reconciler each query
one range per (status, shard) they cover, so their cost grows with the shard count
(docs/scaling.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .conditions import attribute_names
from .items import INDEX, text
from .protocol import Call

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import QueryInputTypeDef


def query_index(
    table: str,
    partition: str,
    low: str,
    high: str,
    *,
    limit: int,
    start: Mapping[str, Any] | None,
    filter: str | None = None,
    values: Mapping[str, Any] | None = None,
) -> Call:
    """One page of a list-index partition, ``low <= gsi_sk <= high``, oldest first."""
    params = _index_range(table, partition, low, high, start, filter, values)
    params["Limit"] = limit
    params["ScanIndexForward"] = True
    return Call("dynamodb", "query", params)


def count_index(
    table: str,
    partition: str,
    low: str,
    high: str,
    *,
    start: Mapping[str, Any] | None,
    filter: str | None = None,
    values: Mapping[str, Any] | None = None,
) -> Call:
    """How many items of a list-index range match ``filter`` (``Select=COUNT``), one page.

    A page stops after 1 MB of items read, so a large range needs ``LastEvaluatedKey``.
    """
    params = _index_range(table, partition, low, high, start, filter, values)
    params["Select"] = "COUNT"
    return Call("dynamodb", "query", params)


def _index_range(
    table: str,
    partition: str,
    low: str,
    high: str,
    start: Mapping[str, Any] | None,
    filter: str | None,
    values: Mapping[str, Any] | None,
) -> QueryInputTypeDef:
    key = "#gsi_pk = :partition AND #gsi_sk BETWEEN :low AND :high"
    params: QueryInputTypeDef = {
        "TableName": table,
        "IndexName": INDEX,
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
