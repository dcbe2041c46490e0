"""A scripted stand-in for AWS: flows run against it without an emulator.

``FakeAws`` answers each call from a per-operation script (a reply dict, or an
``AwsError`` to throw) and records the calls, so a test asserts the sequence of
operations a flow made, never the text of its expressions (the emulator judges those).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqsjobs import EnqueueRequest, Job
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS
from sqsjobs.aws.wire.items import item_from_job
from sqsjobs.aws.wire.layout import Layout
from sqsjobs.aws.wire.protocol import AwsError, Call, ConditionFailed, Reply
from sqsjobs.aws.wire.sqs import Message, QueueInfo
from sqsjobs.producer.enqueue import Prepared, prepare
from tests.support.config import make_config

NOW = 1_796_094_741.2439704  # like time.time(): digits a datetime cannot keep
URL = "https://sqs.local/123/default"
DLQ = "https://sqs.local/123/default-dlq"


def layout(max_receive_count: int | None = 5) -> Layout:
    info = QueueInfo(URL, DLQ, max_receive_count, 345_600.0)
    return Layout("jobs", {"default": URL}, {"default": DLQ}, {"default": info}, 100.0, 1000.0)


def prepared(payload: Any = None, *, at: float = NOW, **options: Any) -> Prepared:
    config = make_config(default_max_attempts=3, clock=lambda: at)
    return prepare(config, EnqueueRequest("fake.job", payload, **options), at)


def refused(item: Mapping[str, Any] | None = None) -> ConditionFailed:
    return ConditionFailed(
        "ConditionalCheckFailedException",
        "refused",
        "update_item",
        RuntimeError(),
        dict(item) if item is not None else None,
    )


def failure(code: str = "InternalError") -> AwsError:
    return AwsError(code, "boom", "send_message", RuntimeError("boom"))


def stored(
    job: Job, fingerprint: str | None = None, *, expires_at: float | None = None, **changes: Any
) -> dict[str, Any]:
    """The item the table would hold for ``job`` with ``changes`` applied to the Job."""
    changed = job.model_copy(update=changes)
    item = item_from_job(changed, fingerprint, DEFAULT_SHARDS)
    if changed.lease_token is not None:
        item["lease_token"] = {"S": changed.lease_token}
        item["locked_by"] = {"S": changed.locked_by or "w"}
    if changed.lease_until is not None:
        item["lease_until"] = {"N": repr(changed.lease_until.timestamp())}
    if expires_at is not None:
        item["expires_at"] = {"N": repr(expires_at)}
    return item


def message(body: str, receive_count: int = 1, sent_at: float = NOW) -> Message:
    return Message("m-1", "handle-1", body, receive_count, sent_at)


class FakeAws:
    """``send`` for ``drive``: answers from ``script[operation]`` in order, default ``{}``."""

    def __init__(self, **script: list[Reply | AwsError]) -> None:
        self.script = {op: list(replies) for op, replies in script.items()}
        self.calls: list[Call] = []

    def __call__(self, call: Call) -> Reply:
        self.calls.append(call)
        replies = self.script.get(call.operation)
        reply: Reply | AwsError = replies.pop(0) if replies else {}
        if isinstance(reply, AwsError):
            raise reply
        return reply

    async def asend(self, call: Call) -> Reply:
        return self(call)

    @property
    def operations(self) -> list[str]:
        return [call.operation for call in self.calls]
