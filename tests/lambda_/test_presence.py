"""A Lambda execution environment's presence record: written by the invocations that find
their last write older than the interval, with the queues its events came from."""

from __future__ import annotations

from typing import Any

from sqsjobs import SyncJobQueue, __version__
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler
from sqsjobs.core.presence import PRESENCE_INTERVAL, PRESENCE_TTL
from sqsjobs.core.times import utc

from ..support.clock import AheadClock
from .conftest import Context, receive_event


def test_an_invocation_writes_the_record_when_the_last_write_is_older_than_the_interval(
    store: SqsJobStore, sqs: Any
) -> None:
    clock = AheadClock()
    queue = SyncJobQueue(store)
    handlers = {"add": lambda payload: payload["a"] + 1, "mail.send": lambda ctx: None}
    handler = make_lambda_handler(handlers, store=store, clock=clock, concurrency=4)
    assert store.sync.presences(clock()) == []  # nothing before the first invocation

    for a in range(2):
        queue.enqueue("add", {"a": a})
    before = clock()
    assert handler(receive_event(sqs, store.queue_urls["default"], 2), Context()) == {
        "batchItemFailures": []
    }
    (first,) = store.sync.presences(clock())
    assert first.worker_id.startswith("lambda-")
    assert (first.version, first.queues, first.names) == (
        __version__,
        ("default",),
        ("add", "mail.send"),
    )
    assert (first.concurrency, first.running) == (4, 2)
    assert before <= first.heartbeat_at.timestamp() <= clock()
    assert before <= first.last_claims["default"].timestamp() <= first.heartbeat_at.timestamp()
    assert first.expires_at == utc(first.heartbeat_at.timestamp() + PRESENCE_TTL)

    # Within the interval, an invocation writes nothing.
    queue.enqueue("add", {"a": 7})
    clock.offset += PRESENCE_INTERVAL / 2
    handler(receive_event(sqs, store.queue_urls["default"], 1), Context())
    assert store.sync.presences(clock()) == [first]

    # Past it, the next one writes again: the environment is still alive.
    queue.enqueue("add", {"a": 8})
    clock.offset += PRESENCE_INTERVAL
    handler(receive_event(sqs, store.queue_urls["default"], 1), Context())
    (again,) = store.sync.presences(clock())
    assert (again.worker_id, again.started_at, again.running) == (
        first.worker_id,
        first.started_at,
        1,
    )
    assert again.heartbeat_at > first.heartbeat_at
    # An environment no invocation reaches lets its record run out.
    assert store.sync.presences(clock() + PRESENCE_TTL + 1) == []
