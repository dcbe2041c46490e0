"""Where a store's jobs live: the table, each queue's SQS facts, and the retention periods.

A ``Layout`` is an immutable value the flows read. The store learns each queue's
redrive policy and retention lazily (``describe_queue``, one request per queue per store
lifetime), unless ``SqsJobStore.create`` already knew them because it made the queues.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .._errors import JobConfigError
from ._sqs import QueueInfo
from ._transport import Call, Flow

if TYPE_CHECKING:
    from mypy_boto3_sqs.type_defs import (
        GetQueueAttributesRequestTypeDef,
        GetQueueUrlRequestTypeDef,
        ListDeadLetterSourceQueuesRequestTypeDef,
    )


@dataclass(frozen=True)
class Layout:
    table: str
    queue_urls: Mapping[str, str]
    dead_letter_urls: Mapping[str, str] = field(default_factory=dict)
    described: Mapping[str, QueueInfo] = field(default_factory=dict)
    retention: float = 86_400.0
    dead_retention: float = 1_209_600.0
    clock_skew: float = 2.0  # how far two hosts' clocks may disagree (``lease_expired``)
    resend_after: float = 60.0  # a duplicate enqueue re-sends a message older than this

    def url(self, queue: str) -> str:
        try:
            return self.queue_urls[queue]
        except KeyError:
            known = ", ".join(sorted(self.queue_urls)) or "none"
            raise JobConfigError(
                "invalid_option",
                f"Queue {queue!r} has no SQS queue in this store; configured queues: {known}",
            ) from None

    def info(self, queue: str) -> QueueInfo:
        """The queue's facts; a queue not yet described is assumed to have no limits."""
        described = self.described.get(queue)
        if described is not None:
            return described
        return QueueInfo(self.url(queue), self.dead_letter_urls.get(queue), None)

    def with_info(self, queue: str, info: QueueInfo) -> Layout:
        return replace(self, described={**self.described, queue: info})


def describe_queue(queue: str, url: str, dead_letter_url: str | None) -> Flow[QueueInfo]:
    """Read a queue's redrive policy and retention; find its DLQ's URL if not given.

    Refuses a work queue that is some queue's dead-letter queue (the easy mistake of
    copying the wrong URL): workers would run every dead job again, and a redrive would
    send jobs to the queue they came from.
    """
    yield from _refuse_dead_letter_queue(queue, url)
    params: GetQueueAttributesRequestTypeDef = {
        "QueueUrl": url,
        "AttributeNames": ["RedrivePolicy", "MessageRetentionPeriod"],
    }
    reply = yield Call("sqs", "get_queue_attributes", params)
    attributes = reply.get("Attributes", {})
    retention = float(attributes.get("MessageRetentionPeriod", "345600"))
    policy = json.loads(attributes["RedrivePolicy"]) if "RedrivePolicy" in attributes else None
    if policy is None:
        return QueueInfo(url, dead_letter_url, None, retention)
    if dead_letter_url is None:
        # arn:aws:sqs:{region}:{account}:{name}
        *_, account, name = str(policy["deadLetterTargetArn"]).split(":")
        lookup: GetQueueUrlRequestTypeDef = {"QueueName": name, "QueueOwnerAWSAccountId": account}
        dead_letter_url = str((yield Call("sqs", "get_queue_url", lookup))["QueueUrl"])
    return QueueInfo(url, dead_letter_url, int(policy["maxReceiveCount"]), retention)


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
