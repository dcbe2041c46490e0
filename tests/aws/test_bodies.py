"""Long payloads live in body items: written once, read where a payload is needed, kept alive.

A payload over ``INLINE_PAYLOAD_BYTES`` is written before its record in ``body#{id}``; the
record carries ``body_until`` instead. Every reader that returns jobs (a worker's claim,
``get``, ``list``, dead letters) must hand back the payload itself, and a body must never
expire before its record could be read again.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from sqsjobs import JobContext, JobFatalError, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.items import BODY_EXTEND_WITHIN, BODY_LIFE, INLINE_PAYLOAD_BYTES
from sqsjobs.testing_payloads import random_document

from .conftest import SKEW

DAY = 86_400.0
DEAD_RETENTION = 1_209_600.0  # the store's default, 14 days


def long_payload(n: int) -> dict[str, Any]:
    """3 KB of JSON that no compression brings within the record, with unicode."""
    return {"order": n, "note": "Grüße aus Köln", **random_document(3_000, seed=n)}


def item(dynamodb: Any, table: str, key: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = dynamodb.get_item(
        TableName=table, Key={"pk": {"S": key}}, ConsistentRead=True
    ).get("Item")
    return found


def store_at(aws_endpoint: str, made: SqsJobStore, offset: float) -> SqsJobStore:
    """The same table and queues, through a store whose clock runs ``offset`` s ahead."""
    return SqsJobStore(
        table_name=made.table_name,
        queue_urls=made.queue_urls,
        endpoint_url=aws_endpoint,
        clock_skew=SKEW,
        clock=lambda: time.time() + offset,
    )


async def test_a_long_payload_is_written_once_and_every_reader_returns_it(
    store: SqsJobStore, dynamodb: Any
) -> None:
    queue = JobQueue(store)
    payload = long_payload(1)
    job = (await queue.enqueue("order.pack", payload, tenant="acme")).job
    record = item(dynamodb, store.table_name, f"job#{job.id}")
    body = item(dynamodb, store.table_name, f"body#{job.id}")
    assert record is not None and body is not None
    assert "payload" not in record and len(body["z"]["B"]) > INLINE_PAYLOAD_BYTES
    until = float(record["body_until"]["N"])
    assert float(body["expires_at"]["N"]) == until
    assert until == pytest.approx(job.run_at.timestamp() + BODY_LIFE + DEAD_RETENTION)

    assert (await queue.get(job.id)).payload == payload  # type: ignore[union-attr]
    (listed,) = (await queue.list(queue="default")).jobs
    assert listed.payload == payload

    seen: list[Any] = []

    async def pack(ctx: JobContext) -> None:
        seen.append(ctx.job.payload)
        raise JobFatalError("carrier refused the parcel")

    worker = JobWorker(queue, {"order.pack": pack}, queues=["default"])
    assert await worker.run_once()
    assert seen == [payload]
    dead = await store.dead_letters("default", limit=10)
    assert [d.job.payload for d in dead if d.job is not None] == [payload]
    # Nothing but the record changed: the body was written once.
    assert item(dynamodb, store.table_name, f"body#{job.id}") == body


async def test_a_duplicate_enqueue_of_a_long_payload_returns_it(store: SqsJobStore) -> None:
    queue = JobQueue(store)
    payload = long_payload(2)
    first = await queue.enqueue("order.pack", payload, idempotency_key="order-2", tenant="acme")
    again = await queue.enqueue("order.pack", payload, idempotency_key="order-2", tenant="acme")
    assert again.duplicate and again.job.id == first.job.id
    assert again.job.payload == payload


async def test_a_record_whose_body_is_gone_is_dead_lettered_as_malformed(
    store: SqsJobStore, dynamodb: Any
) -> None:
    queue = JobQueue(store)
    job = (await queue.enqueue("order.pack", long_payload(3))).job
    dynamodb.delete_item(TableName=store.table_name, Key={"pk": {"S": f"body#{job.id}"}})
    ran: list[str] = []

    async def pack(ctx: JobContext) -> None:
        ran.append(ctx.job.id)

    await JobWorker(queue, {"order.pack": pack}, queues=["default"]).run_once()
    assert ran == []
    stored = await queue.get(job.id)
    assert stored is not None and stored.status is JobStatus.DEAD
    assert stored.last_error is not None and f"body#{job.id} is missing" in stored.last_error


async def test_a_claim_weeks_later_extends_the_body_and_a_short_payload_stays_inline(
    store: SqsJobStore, dynamodb: Any, aws_endpoint: str
) -> None:
    queue = JobQueue(store)
    job = (await queue.enqueue("order.pack", long_payload(4), queue="other")).job
    small = (await queue.enqueue("order.pack", {"order": 5}, queue="other")).job
    assert "payload" in (item(dynamodb, store.table_name, f"job#{small.id}") or {})
    assert item(dynamodb, store.table_name, f"body#{small.id}") is None
    written = float(item(dynamodb, store.table_name, f"body#{job.id}")["expires_at"]["N"])  # type: ignore[index]

    # 40 days on, the body has less than its extension margin left: the claim extends it.
    later = store_at(aws_endpoint, store, 40 * DAY)
    try:
        claimed = await later.claim("other", "worker-b", time.time() + 40 * DAY, limit=10)
        assert sorted(j.id for j in claimed) == sorted([job.id, small.id])
        assert [j.payload for j in claimed if j.id == job.id] == [long_payload(4)]
    finally:
        await later.aclose()
    body = item(dynamodb, store.table_name, f"body#{job.id}")
    record = item(dynamodb, store.table_name, f"job#{job.id}")
    assert body is not None and record is not None
    extended = float(body["expires_at"]["N"])
    assert extended == float(record["body_until"]["N"])
    assert extended > written
    assert extended - (time.time() + 40 * DAY) >= BODY_EXTEND_WITHIN + DEAD_RETENTION


async def test_a_retry_due_beyond_the_bodys_margin_extends_it(
    store: SqsJobStore, dynamodb: Any
) -> None:
    queue = JobQueue(store)
    job = (await queue.enqueue("order.pack", long_payload(6), max_attempts=3)).job
    (claimed,) = await store.claim("default", "worker-c", time.time(), limit=10)
    retry_at = time.time() + 60 * DAY + 0.123
    assert await store.fail(
        claimed.id, claimed.lease_token or "", "carrier closed", retry_at, time.time()
    )
    body = item(dynamodb, store.table_name, f"body#{job.id}")
    assert body is not None
    assert float(body["expires_at"]["N"]) >= retry_at + BODY_EXTEND_WITHIN + DEAD_RETENTION
