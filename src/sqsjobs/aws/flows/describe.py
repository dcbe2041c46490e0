"""Describing a queue: its redrive policy, retention and visibility timeout, read once per
queue per store.

Both faces of a store (and the Lambda handler) learn a queue's facts through this one
flow; the store keeps what it learned in its ``Layout``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...core.errors import JobConfigError
from ..wire.layout import Layout
from ..wire.protocol import Call, Flow
from ..wire.sqs import QueueInfo

if TYPE_CHECKING:
    from mypy_boto3_sqs.type_defs import (
        GetQueueAttributesRequestTypeDef,
        GetQueueUrlRequestTypeDef,
        ListDeadLetterSourceQueuesRequestTypeDef,
    )


def describe_missing(layout: Layout, queues: Sequence[str]) -> Flow[dict[str, QueueInfo]]:
    """The facts of each queue in ``queues`` that ``layout`` has not described yet."""
    found: dict[str, QueueInfo] = {}
    for queue in queues:
        if queue not in layout.described and queue not in found:
            url = layout.url(queue)
            found[queue] = yield from describe_queue(queue, url, layout.dead_letter_urls.get(queue))
    return found


def describe_queue(queue: str, url: str, dead_letter_url: str | None) -> Flow[QueueInfo]:
    """Read a queue's redrive policy, retention and visibility; find its DLQ's URL if not given.

    Refuses a work queue that is some queue's dead-letter queue (the easy mistake of
    copying the wrong URL): workers would run every dead job again, and a redrive would
    send jobs to the queue they came from.
    """
    yield from _refuse_dead_letter_queue(queue, url)
    params: GetQueueAttributesRequestTypeDef = {
        "QueueUrl": url,
        "AttributeNames": ["RedrivePolicy", "MessageRetentionPeriod", "VisibilityTimeout"],
    }
    reply = yield Call("sqs", "get_queue_attributes", params)
    attributes = reply.get("Attributes", {})
    retention = float(attributes.get("MessageRetentionPeriod", "345600"))
    visibility = int(attributes.get("VisibilityTimeout", "30"))
    policy = json.loads(attributes["RedrivePolicy"]) if "RedrivePolicy" in attributes else None
    if policy is None:
        return QueueInfo(url, dead_letter_url, None, retention, visibility)
    if dead_letter_url is None:
        # arn:aws:sqs:{region}:{account}:{name}
        *_, account, name = str(policy["deadLetterTargetArn"]).split(":")
        lookup: GetQueueUrlRequestTypeDef = {"QueueName": name, "QueueOwnerAWSAccountId": account}
        dead_letter_url = str((yield Call("sqs", "get_queue_url", lookup))["QueueUrl"])
    receives = int(policy["maxReceiveCount"])
    return QueueInfo(url, dead_letter_url, receives, retention, visibility)


def _refuse_dead_letter_queue(queue: str, url: str) -> Flow[None]:
    params: ListDeadLetterSourceQueuesRequestTypeDef = {"QueueUrl": url, "MaxResults": 1}
    reply = yield Call("sqs", "list_dead_letter_source_queues", params)
    sources = reply.get("queueUrls", [])
    if sources:
        raise JobConfigError(
            "invalid_option",
            f"Queue {queue!r} ({url}) is the dead-letter queue of {sources[0]}; configure "
            "the job queue's URL, and its dead-letter queue as dead_letter_queue_urls",
        )
