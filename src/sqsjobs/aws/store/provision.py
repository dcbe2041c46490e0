"""``SqsJobStore.create``: make (or find) the table, queues and DLQs through the APIs.

For development, tests and the demo; production deploys ``infra/``, which describes the
same resources. Every step tolerates "already exists", so a second call with the same
prefix reuses what the first made. Names: table ``{prefix}-jobs``, queue
``{prefix}-{queue}``, DLQ ``{prefix}-{queue}-dlq`` (a queue name SQS would refuse, e.g.
one with ``:``, is made safe and suffixed with a short hash). A FIFO queue and its DLQ
(``fifo=``) end in ``.fifo``, as SQS requires, with content-based deduplication off: the
store sends a deduplication id with every message (``wire.sqs.route``).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...core.validation import check_queue_name, integer
from ..wire.index_keys import INDEX, INDEX_PROJECTION, LEGACY_INDEX
from ..wire.items import TTL_ATTRIBUTE
from ..wire.protocol import AwsError, Call, Send
from ..wire.sqs import FIFO_SUFFIX, QueueInfo

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import (
        CreateGlobalSecondaryIndexActionTypeDef,
        CreateTableInputTypeDef,
        UpdateTableInputTypeDef,
        UpdateTimeToLiveInputTypeDef,
    )
    from mypy_boto3_sqs.literals import QueueAttributeNameType
    from mypy_boto3_sqs.type_defs import (
        CreateQueueRequestTypeDef,
        GetQueueAttributesRequestTypeDef,
    )

PREFIX = re.compile(r"[a-zA-Z0-9_-]{1,40}")
QUEUE_RETENTION = 345_600  # 4 days, the SQS default
DEAD_LETTER_RETENTION = 1_209_600  # 14 days: longer than the source (a DLQ keeps enqueue time)
QUEUE_VISIBILITY = 30
READY_TIMEOUT = 120.0


@dataclass(frozen=True)
class Provisioned:
    table: str
    queues: dict[str, QueueInfo]
    lanes: dict[str, dict[int, str]]
    previous_index: bool  # the table still has the previous layout's list index


def provisioned(
    prefix: str,
    queues: Sequence[str],
    max_receive_count: int,
    priority_bands: Sequence[int],
    fifo: bool | Collection[str],
    arguments: Mapping[str, Any],
) -> Provisioned:
    """``provision`` over a blocking transport to the endpoint the store's ``arguments``
    name (their SDK objects too), checked before anything is made."""
    from ..wire.index_keys import DEFAULT_SHARDS
    from .checks import checked_shards
    from .config import before_the_store

    checked_shards(arguments.get("index_shards", DEFAULT_SHARDS))
    return before_the_store(
        arguments,
        lambda send: provision(send, prefix, queues, max_receive_count, priority_bands, fifo),
    )


def provision(
    send: Send,
    prefix: str,
    queues: Sequence[str],
    max_receive_count: int,
    priority_bands: Sequence[int] = (),
    fifo: bool | Collection[str] = False,
) -> Provisioned:
    if not isinstance(prefix, str) or PREFIX.fullmatch(prefix) is None:
        raise ValueError(f"Invalid prefix {prefix!r}: must match {PREFIX.pattern}")
    names = [check_queue_name(q) for q in queues]
    if not names or isinstance(queues, str):
        raise ValueError("queues must be a non-empty sequence of queue names")
    integer(max_receive_count, "max_receive_count", minimum=1, maximum=1000, code=None)
    bands = _bands(priority_bands)
    fifos = _fifo_queues(fifo, names)
    table = f"{prefix}-jobs"
    previous_index = _ensure_table(send, table)
    made = {q: _ensure_queue(send, prefix, q, max_receive_count, q in fifos) for q in names}
    # A FIFO queue's order is its groups': it takes no priority lanes.
    lanes = {
        queue: {band: _ensure_lane(send, prefix, queue, band, info) for band in bands}
        for queue, info in made.items()
        if bands and queue not in fifos
    }
    return Provisioned(table, made, lanes, previous_index)


def _fifo_queues(fifo: bool | Collection[str], names: Sequence[str]) -> frozenset[str]:
    """Which of ``names`` are to be FIFO: all (``True``), none, or those listed."""
    if isinstance(fifo, bool):
        return frozenset(names) if fifo else frozenset()
    if isinstance(fifo, str) or not set(fifo) <= set(names):
        raise ValueError(
            f"fifo must be True, False or a collection of the queues given "
            f"({', '.join(names)}), got {fifo!r}"
        )
    return frozenset(fifo)


def _bands(priority_bands: Sequence[int]) -> list[int]:
    if isinstance(priority_bands, (str, bytes)) or not isinstance(priority_bands, Sequence):
        raise ValueError(f"priority_bands must be a sequence of priorities, got {priority_bands!r}")
    for band in priority_bands:
        integer(band, "priority_bands entry", minimum=1, maximum=2**31 - 1, code=None)
    if len(set(priority_bands)) != len(priority_bands):
        raise ValueError(f"priority_bands must not repeat a band, got {list(priority_bands)}")
    return sorted(priority_bands)


def _ensure_lane(send: Send, prefix: str, queue: str, band: int, info: QueueInfo) -> str:
    """A lane: a queue of its own, redriven to ``queue``'s DLQ like the queue itself."""
    assert info.dead_letter_url is not None and info.max_receive_count is not None
    lookup: GetQueueAttributesRequestTypeDef = {
        "QueueUrl": info.dead_letter_url,
        "AttributeNames": ["QueueArn"],
    }
    arn = send(Call("sqs", "get_queue_attributes", lookup))["Attributes"]["QueueArn"]
    policy = {"deadLetterTargetArn": arn, "maxReceiveCount": str(info.max_receive_count)}
    return _create_queue(
        send,
        sqs_name(prefix, queue, f"-p{band}"),
        {
            "RedrivePolicy": json.dumps(policy, separators=(",", ":")),
            "MessageRetentionPeriod": str(QUEUE_RETENTION),
            "VisibilityTimeout": str(QUEUE_VISIBILITY),
        },
    )


def sqs_name(prefix: str, queue: str, suffix: str = "") -> str:
    safe = queue.replace(":", "_")
    name = f"{prefix}-{safe}{suffix}"
    if safe == queue and len(name) <= 80:
        return name
    digest = hashlib.sha256(queue.encode()).hexdigest()[:8]
    room = 80 - len(prefix) - len(suffix) - len(digest) - 2
    return f"{prefix}-{safe[:room]}-{digest}{suffix}"


def _table_definition(table: str) -> CreateTableInputTypeDef:
    return {
        "TableName": table,
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": "S"} for name in ("pk", "list_pk", "list_sk")
        ],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "GlobalSecondaryIndexes": [_list_index()],
        "BillingMode": "PAY_PER_REQUEST",
    }


def _list_index() -> CreateGlobalSecondaryIndexActionTypeDef:
    return {
        "IndexName": INDEX,
        "KeySchema": [
            {"AttributeName": "list_pk", "KeyType": "HASH"},
            {"AttributeName": "list_sk", "KeyType": "RANGE"},
        ],
        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(INDEX_PROJECTION)},
    }


def _ensure_table(send: Send, table: str) -> bool:
    """Make the table, or bring one made by an earlier release up to this layout.

    A table from before ``by_queue`` gets that index added (the table stays usable while
    DynamoDB builds it; this waits until it is active). Returns whether the table has
    the previous layout's ``by_status`` index, which readers then query too.
    """
    definition = _table_definition(table)
    try:
        send(Call("dynamodb", "create_table", definition))
    except AwsError as error:
        if error.code != "ResourceInUseException":
            raise
    indexes = _wait_until_active(send, table)
    if INDEX not in indexes:
        add: UpdateTableInputTypeDef = {
            "TableName": table,
            "AttributeDefinitions": definition["AttributeDefinitions"],
            "GlobalSecondaryIndexUpdates": [{"Create": _list_index()}],
        }
        send(Call("dynamodb", "update_table", add))
        indexes = _wait_until_active(send, table)
    ttl = send(Call("dynamodb", "describe_time_to_live", {"TableName": table}))
    if ttl["TimeToLiveDescription"]["TimeToLiveStatus"] not in ("ENABLED", "ENABLING"):
        enable: UpdateTimeToLiveInputTypeDef = {
            "TableName": table,
            "TimeToLiveSpecification": {"Enabled": True, "AttributeName": TTL_ATTRIBUTE},
        }
        send(Call("dynamodb", "update_time_to_live", enable))
    return LEGACY_INDEX in indexes


def _wait_until_active(send: Send, table: str) -> list[str]:
    """Wait for the table and its indexes to be active; the indexes' names."""
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        described = send(Call("dynamodb", "describe_table", {"TableName": table}))["Table"]
        indexes = described.get("GlobalSecondaryIndexes", [])
        if described["TableStatus"] == "ACTIVE" and all(
            i.get("IndexStatus", "ACTIVE") == "ACTIVE" for i in indexes
        ):
            return [str(i["IndexName"]) for i in indexes]
        if time.monotonic() > deadline:
            raise TimeoutError(f"Table {table!r} did not become ACTIVE in {READY_TIMEOUT:g}s")
        time.sleep(1.0)


def _ensure_queue(
    send: Send, prefix: str, queue: str, max_receive_count: int, fifo: bool
) -> QueueInfo:
    kind: dict[QueueAttributeNameType, str] = (
        {"FifoQueue": "true", "ContentBasedDeduplication": "false"} if fifo else {}
    )
    suffix = FIFO_SUFFIX if fifo else ""
    dead_letter_url = _create_queue(
        send,
        sqs_name(prefix, queue, "-dlq" + suffix),
        {"MessageRetentionPeriod": str(DEAD_LETTER_RETENTION), **kind},
    )
    lookup: GetQueueAttributesRequestTypeDef = {
        "QueueUrl": dead_letter_url,
        "AttributeNames": ["QueueArn"],
    }
    arn = send(Call("sqs", "get_queue_attributes", lookup))["Attributes"]["QueueArn"]
    policy = {"deadLetterTargetArn": arn, "maxReceiveCount": str(max_receive_count)}
    url = _create_queue(
        send,
        sqs_name(prefix, queue, suffix),
        {
            "RedrivePolicy": json.dumps(policy, separators=(",", ":")),
            "MessageRetentionPeriod": str(QUEUE_RETENTION),
            "VisibilityTimeout": str(QUEUE_VISIBILITY),
            **kind,
        },
    )
    return QueueInfo(
        url, dead_letter_url, max_receive_count, float(QUEUE_RETENTION), QUEUE_VISIBILITY
    )


def _create_queue(send: Send, name: str, attributes: Mapping[QueueAttributeNameType, str]) -> str:
    params: CreateQueueRequestTypeDef = {"QueueName": name, "Attributes": attributes}
    return str(send(Call("sqs", "create_queue", params))["QueueUrl"])
