"""Tables and records of the previous layout keep working: a rolling upgrade loses nothing.

Before ``by_queue``, every record carried ``gsi_pk = "{status}#{shard}"`` and ``gsi_sk =
"{queue}#{created_at:020.6f}#{id}"`` and was listed by the ``by_status`` index
(projection ALL), item version 1. Such a table is made here as that release made it,
with records written as its codec wrote them (today's item minus the ``by_queue``
attributes, plus the ``by_status`` ones), next to jobs enqueued after the upgrade:
``SqsJobStore.create`` adds ``by_queue`` to the table, and listing, stats, a worker and
the reconciler see every job, old and new, exactly once.
"""

from __future__ import annotations

import time
import zlib
from typing import Any

from sqsjobs import Job, JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.index_keys import index_pk, index_sk
from sqsjobs.aws.wire.items import item_from_job

from .conftest import QUEUES, SKEW, all_ids
from .emulator import COUNTER

TENANTS = ("acme", "umbrella", "globex-2")


def make_previous_table(dynamodb: Any, table: str) -> None:
    """The table as the release before ``by_queue`` made it."""
    dynamodb.create_table(
        TableName=table,
        AttributeDefinitions=[
            {"AttributeName": name, "AttributeType": "S"} for name in ("pk", "gsi_pk", "gsi_sk")
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by_status",
                "KeySchema": [
                    {"AttributeName": "gsi_pk", "KeyType": "HASH"},
                    {"AttributeName": "gsi_sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def previous_item(job: Job, **changes: Any) -> dict[str, Any]:
    """``job`` as the previous release's codec wrote it (version 1, ``by_status`` keys)."""
    item = item_from_job(job, None, 4)
    for name in ("list_pk", "list_sk", "phase"):
        del item[name]
    created = job.created_at.timestamp()
    item["v"] = {"N": "1"}
    item["gsi_pk"] = {"S": index_pk(job.status, zlib.crc32(job.id.encode()) % 4)}
    item["gsi_sk"] = {"S": index_sk(job.queue, created, job.id)}
    item.update(changes)
    return item


def old_job(n: int, status: JobStatus, created: float) -> Job:
    return Job.model_validate(
        {
            "id": f"{n:04d}" + "ab" * 14,
            "queue": QUEUES[n % 2],
            "name": "invoice.send",
            "payload": {"invoice": n, "note": "Grüße, Zoë"},
            "status": status,
            "attempts": 0,
            "max_attempts": 3,
            "run_at": created,
            "created_at": created,
            "updated_at": created,
            "lease_until": None,
            "locked_by": None,
            "lease_token": None,
            "lease": 30.0,
            "timeout": 30.0,
            "priority": 0,
            "idempotency_key": None,
            "tenant": TENANTS[n % 3],
            "last_error": None,
            "completed_at": None,
            "result": None,
        }
    )


async def test_a_previous_table_gains_the_new_index_and_every_reader_sees_both_layouts(
    aws_endpoint: str, prefix: str, dynamodb: Any
) -> None:
    table = f"{prefix}-jobs"
    make_previous_table(dynamodb, table)
    start = time.time() - 1_800.123457  # half an hour ago (within stats' window)
    old = [old_job(n, JobStatus.QUEUED, start + n * 0.37) for n in range(6)]
    finished = old_job(6, JobStatus.COMPLETED, start + 5.5)
    for job in old:
        dynamodb.put_item(TableName=table, Item=previous_item(job))
    done = {"completed_at": {"N": str(start + 9)}, "expires_at": {"N": str(time.time() + 86_400)}}
    dynamodb.put_item(TableName=table, Item=previous_item(finished, **done))

    store = SqsJobStore.create(
        prefix, queues=QUEUES, max_receive_count=5, endpoint_url=aws_endpoint, clock_skew=SKEW
    )
    try:
        indexes = dynamodb.describe_table(TableName=table)["Table"]["GlobalSecondaryIndexes"]
        assert sorted(index["IndexName"] for index in indexes) == ["by_queue", "by_status"]
        queue = JobQueue(store)
        new = [
            (await queue.enqueue("invoice.send", {"invoice": 100 + n}, tenant=TENANTS[n % 3])).job
            for n in range(4)
        ]
        everyone = [job.id for job in [*old[:6], finished, *new]]  # oldest first
        assert await all_ids(queue, 3) == everyone
        assert await all_ids(queue, 3, status=JobStatus.COMPLETED) == [finished.id]
        assert await all_ids(queue, 3, tenant="acme", queue="default") == [
            job.id
            for job in [*old, finished, *new]
            if job.tenant == "acme" and job.queue == "default"
        ]
        counts = await total_counts(store)
        assert (counts[JobStatus.QUEUED], counts[JobStatus.COMPLETED]) == (10, 1)

        # The previous layout's queued jobs had their messages lost: the reconciler
        # finds them in by_status (the new ones are younger than the grace period).
        report = await store.reconcile(grace=60.0)
        assert report.resent == 6

        ran: list[str] = []

        async def send(ctx: JobContext) -> str:
            ran.append(ctx.job.id)
            return "sent"

        worker = JobWorker(queue, {"invoice.send": send}, queues=list(QUEUES), concurrency=4)
        for _ in range(20):
            if len(ran) == 10:
                break
            await worker.run_once()
        assert sorted(ran) == sorted(job.id for job in [*old, *new])
        # Each job once, each completed: the old ones still listed through by_status.
        assert await all_ids(queue, 3, status=JobStatus.COMPLETED) == everyone
        assert await all_ids(queue, 3, status=[JobStatus.QUEUED, JobStatus.RUNNING]) == []
        counts = await total_counts(store)
        assert (counts[JobStatus.QUEUED], counts[JobStatus.COMPLETED]) == (0, 11)
        stored = dynamodb.get_item(TableName=table, Key={"pk": {"S": f"job#{old[0].id}"}})["Item"]
        assert stored["gsi_pk"]["S"].startswith("completed#") and "list_sk" not in stored
    finally:
        await store.aclose()


async def test_a_store_given_only_the_table_finds_the_previous_index_once(
    aws_endpoint: str, prefix: str, dynamodb: Any
) -> None:
    made = SqsJobStore.create(prefix, queues=QUEUES, endpoint_url=aws_endpoint)
    await made.aclose()
    plain = SqsJobStore(
        table_name=made.table_name, queue_urls=made.queue_urls, endpoint_url=aws_endpoint
    )
    try:
        queue = JobQueue(plain)
        await queue.enqueue("invoice.send", {"invoice": 1})
        before = COUNTER.counts()
        assert len((await queue.list()).jobs) == 1
        assert len((await queue.list()).jobs) == 1
        spent = COUNTER.counts() - before
        # One probe of by_status (this table has none: refused), then by_queue only:
        # two lists of two queues of four shards, open and of each terminal status.
        assert spent.requests[("dynamodb", "Query")] == 1 + 2 * 2 * 4 * 4
    finally:
        await plain.aclose()


async def total_counts(store: SqsJobStore) -> dict[JobStatus, int]:
    counts = dict.fromkeys(JobStatus, 0)
    for stats in await store.stats():
        for status, count in stats.counts.items():
            counts[status] += count
    return counts
