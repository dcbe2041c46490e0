"""Items by key, a hundred to a ``BatchGetItem``, the batches sent together.

DynamoDB may leave keys unprocessed when the table is busy; they are asked again
(botocore has already backed off), ten rounds at most before the call fails.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..wire import index_reads
from ..wire.index_reads import BATCH_GET_LIMIT
from ..wire.items import Attributes
from ..wire.protocol import AwsError, Flow, Parallel

UNPROCESSED_ROUNDS = 10


def get_items(
    table: str, keys: Sequence[Attributes], *, consistent: bool = False
) -> Flow[list[Attributes]]:
    """The items under ``keys`` that exist, by ``BatchGetItem``s of 100 sent together."""
    found: list[Attributes] = []
    keys = list(keys)
    for _ in range(UNPROCESSED_ROUNDS):
        if not keys:
            return found
        batches = [keys[i : i + BATCH_GET_LIMIT] for i in range(0, len(keys), BATCH_GET_LIMIT)]
        calls = tuple(index_reads.get_records(table, b, consistent=consistent) for b in batches)
        replies = yield Parallel(calls)
        keys = []
        for reply in replies:
            if isinstance(reply, AwsError):
                raise reply
            found += reply.get("Responses", {}).get(table, [])
            keys += reply.get("UnprocessedKeys", {}).get(table, {}).get("Keys", [])
    missing = ", ".join(str(key["pk"]["S"]) for key in keys[:3])
    raise AwsError(
        "UnprocessedKeys",
        f"DynamoDB left {len(keys)} keys unprocessed after {UNPROCESSED_ROUNDS} rounds "
        f"(first: {missing}); the table is throttled, try again",
        "BatchGetItem",
        RuntimeError("unprocessed keys"),
    )
