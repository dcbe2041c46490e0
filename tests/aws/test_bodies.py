"""Long payloads live in body items: written once, read where a payload is needed, kept alive.

A payload over ``INLINE_PAYLOAD_BYTES`` is written before its record in a body item of its
own (``body#{id}#{nonce}``, new for every put); the record carries ``body_pk`` and
``body_until`` instead. Every reader that returns jobs (a worker's claim,
``get``, ``list``, dead letters) must hand back the payload itself, and a body must never
expire before its record could be read again.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from sqsjobs import (
    JobConfigError,
    JobContext,
    JobFatalError,
    JobIdempotencyConflictError,
    JobQueue,
    JobStatus,
    JobWorker,
)
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.items import BODY_EXTEND_WITHIN, BODY_LIFE, INLINE_PAYLOAD_BYTES
from sqsjobs.testing.payloads import random_document

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
    body = body_of(dynamodb, store.table_name, job.id)
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
    assert body_of(dynamodb, store.table_name, job.id) == body


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
    record = item(dynamodb, store.table_name, f"job#{job.id}")
    assert record is not None
    dynamodb.delete_item(TableName=store.table_name, Key={"pk": record["body_pk"]})
    ran: list[str] = []

    async def pack(ctx: JobContext) -> None:
        ran.append(ctx.job.id)

    await JobWorker(queue, {"order.pack": pack}, queues=["default"]).run_once()
    assert ran == []
    stored = await queue.get(job.id)
    assert stored is not None and stored.status is JobStatus.DEAD
    assert stored.last_error is not None
    assert f"{record['body_pk']['S']} is missing" in stored.last_error


async def test_a_claim_weeks_later_extends_the_body_and_a_short_payload_stays_inline(
    store: SqsJobStore, dynamodb: Any, aws_endpoint: str
) -> None:
    queue = JobQueue(store)
    job = (await queue.enqueue("order.pack", long_payload(4), queue="other")).job
    small = (await queue.enqueue("order.pack", {"order": 5}, queue="other")).job
    assert "payload" in (item(dynamodb, store.table_name, f"job#{small.id}") or {})
    assert "body_pk" not in (item(dynamodb, store.table_name, f"job#{small.id}") or {})
    written = float(body_of(dynamodb, store.table_name, job.id)["expires_at"]["N"])  # type: ignore[index]

    # 40 days on, the body has less than its extension margin left: the claim extends it.
    later = store_at(aws_endpoint, store, 40 * DAY)
    try:
        claimed = await later.claim("other", "worker-b", time.time() + 40 * DAY, limit=10)
        assert sorted(j.id for j in claimed) == sorted([job.id, small.id])
        assert [j.payload for j in claimed if j.id == job.id] == [long_payload(4)]
    finally:
        await later.aclose()
    body = body_of(dynamodb, store.table_name, job.id)
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
    body = body_of(dynamodb, store.table_name, job.id)
    assert body is not None
    assert float(body["expires_at"]["N"]) >= retry_at + BODY_EXTEND_WITHIN + DEAD_RETENTION


def body_of(dynamodb: Any, table: str, job_id: str) -> dict[str, Any] | None:
    """The body item a job's record points at (``body_pk``), as stored."""
    record = item(dynamodb, table, f"job#{job_id}")
    assert record is not None and "body_until" in record
    return item(dynamodb, table, str(record["body_pk"]["S"]))


async def test_a_refused_conflicting_enqueue_leaves_the_original_payload(
    store: SqsJobStore, dynamodb: Any
) -> None:
    queue = JobQueue(store)
    original, other = long_payload(7), long_payload(8)
    first = await queue.enqueue("order.pack", original, idempotency_key="order-7", tenant="acme")
    with pytest.raises(JobIdempotencyConflictError):
        await queue.enqueue("order.pack", other, idempotency_key="order-7", tenant="acme")
    assert (await queue.get(first.job.id)).payload == original  # type: ignore[union-attr]
    (claimed,) = await store.claim("default", "worker-d", time.time(), limit=10)
    assert claimed.id == first.job.id and claimed.payload == original


async def test_a_duplicate_enqueue_due_sooner_keeps_the_bodys_lifetime(
    store: SqsJobStore, dynamodb: Any
) -> None:
    queue = JobQueue(store)
    payload = long_payload(9)
    first = await queue.enqueue(
        "order.pack", payload, idempotency_key="order-9", delay=200 * DAY + 0.37
    )
    before = body_of(dynamodb, store.table_name, first.job.id)
    again = await queue.enqueue("order.pack", payload, idempotency_key="order-9")
    assert again.duplicate
    after = body_of(dynamodb, store.table_name, first.job.id)
    assert after == before and after is not None
    lives_until = float(after["expires_at"]["N"])
    assert lives_until >= first.job.run_at.timestamp() + BODY_LIFE + DEAD_RETENTION - 1


async def test_the_reconciler_keeps_the_body_of_a_job_nobody_claims_alive(
    store: SqsJobStore, dynamodb: Any, aws_endpoint: str
) -> None:
    """A job waiting for weeks (a paused fleet, a queue no worker serves) keeps its payload."""
    queue = JobQueue(store)
    payload = long_payload(10)
    job = (await queue.enqueue("order.pack", payload, queue="other")).job
    written = float(body_of(dynamodb, store.table_name, job.id)["expires_at"]["N"])  # type: ignore[index]
    for days in (40.3, 70.6, 101.2):  # each pass well before the body's TTL as it then is
        later = store_at(aws_endpoint, store, days * DAY)
        try:
            await later.reconcile(grace=900.0, queues=["other"])
        finally:
            await later.aclose()
        body = body_of(dynamodb, store.table_name, job.id)
        assert body is not None
        lives_until = float(body["expires_at"]["N"])
        assert lives_until - (time.time() + days * DAY) >= BODY_EXTEND_WITHIN + DEAD_RETENTION
    assert lives_until > written + 60 * DAY
    later = store_at(aws_endpoint, store, 130 * DAY)
    try:
        (claimed,) = await later.claim("other", "worker-e", time.time() + 130 * DAY, limit=10)
    finally:
        await later.aclose()
    assert claimed.id == job.id and claimed.payload == payload


async def test_retry_refuses_a_dead_job_whose_payload_is_gone(
    store: SqsJobStore, dynamodb: Any
) -> None:
    queue = JobQueue(store)
    job = (await queue.enqueue("order.pack", long_payload(11), max_attempts=1)).job
    (claimed,) = await store.claim("default", "worker-f", time.time(), limit=10)
    assert await store.fail(claimed.id, claimed.lease_token or "", "boom", None, time.time())
    record = item(dynamodb, store.table_name, f"job#{job.id}")
    assert record is not None and record["status"]["S"] == "dead"
    dynamodb.delete_item(TableName=store.table_name, Key={"pk": record["body_pk"]})
    with pytest.raises(JobConfigError, match="payload") as refused:
        await store.retry(job.id, time.time())
    assert job.id in str(refused.value)
    assert item(dynamodb, store.table_name, f"job#{job.id}") == record  # nothing written
    # A dead job whose body is there runs again, as before.
    other = (await queue.enqueue("order.pack", long_payload(12), max_attempts=1)).job
    (claimed,) = await store.claim("default", "worker-f", time.time(), limit=10)
    assert await store.fail(claimed.id, claimed.lease_token or "", "boom", None, time.time())
    assert await store.retry(other.id, time.time())
    assert (await queue.get(other.id)).status is JobStatus.QUEUED  # type: ignore[union-attr]


async def test_a_record_from_before_body_nonces_still_reads_its_body(
    store: SqsJobStore, dynamodb: Any
) -> None:
    queue = JobQueue(store)
    payload = long_payload(13)
    job = (await queue.enqueue("order.pack", payload)).job
    record = item(dynamodb, store.table_name, f"job#{job.id}")
    assert record is not None
    body = item(dynamodb, store.table_name, record["body_pk"]["S"])
    assert body is not None
    dynamodb.put_item(TableName=store.table_name, Item={**body, "pk": {"S": f"body#{job.id}"}})
    dynamodb.delete_item(TableName=store.table_name, Key={"pk": record["body_pk"]})
    del record["body_pk"]
    dynamodb.put_item(TableName=store.table_name, Item=record)
    assert (await queue.get(job.id)).payload == payload  # type: ignore[union-attr]
    (claimed,) = await store.claim("default", "worker-g", time.time(), limit=10)
    assert claimed.payload == payload
