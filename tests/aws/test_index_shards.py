"""The list index's shard count as configuration: writers spread over it, readers cover it.

Every item records its shard in ``list_pk`` (``"{queue}#{shard}"``, written once at put),
so a store that reads more shards than an earlier one wrote still finds every job: the
count may grow on a live table. The request counts pin what listing and stats cost per
shard.
"""

from __future__ import annotations

import time
import zlib
from collections import Counter
from typing import Any

import boto3
import pytest

from sqsjobs import EnqueueRequest, JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore

from .conftest import QUEUES, all_ids
from .emulator import COUNTER

TENANTS = ("acme", "umbrella", "globex-2")


def _open(endpoint: str, prefix: str, shards: int) -> SqsJobStore:
    return SqsJobStore.create(prefix, queues=QUEUES, endpoint_url=endpoint, index_shards=shards)


def _index_keys(endpoint: str, table: str) -> dict[str, str]:
    """Each job id's ``list_pk``, read straight from the table."""
    client = boto3.client("dynamodb", endpoint_url=endpoint)
    try:
        items: list[dict[str, Any]] = []
        pages = client.get_paginator("scan").paginate(TableName=table)
        for page in pages:
            items += page["Items"]
    finally:
        client.close()
    return {i["id"]["S"]: i["list_pk"]["S"] for i in items if i["pk"]["S"].startswith("job#")}


def _requests(n: int, tenant_offset: int = 0, name: str = "report.build") -> list[EnqueueRequest]:
    return [
        EnqueueRequest(
            name,
            {"n": n + tenant_offset, "tenant": "ünïcode"},
            queue=QUEUES[i % 2],
            tenant=TENANTS[i % 3],
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("shards", [1, 8])
async def test_writers_spread_items_over_the_configured_shards(
    aws_endpoint: str, prefix: str, shards: int
) -> None:
    store = _open(aws_endpoint, prefix, shards)
    try:
        queue = JobQueue(store)
        written = [r.job for r in await queue.enqueue_many(_requests(120))]
        claimed = await store.claim("default", "worker-1", time.time(), limit=10)
        assert claimed
        keys = _index_keys(aws_endpoint, store.table_name)
        for job in written:  # a claim leaves the key as the put wrote it
            assert keys[job.id] == f"{job.queue}#{zlib.crc32(job.id.encode()) % shards}"
        assert {key.split("#")[1] for key in keys.values()} == {str(n) for n in range(shards)}
    finally:
        await store.aclose()


async def test_stats_and_listing_query_every_shard_once(aws_endpoint: str, prefix: str) -> None:
    store = _open(aws_endpoint, prefix, 8)
    try:
        queue = JobQueue(store)
        await queue.enqueue_many(_requests(60))
        await store.claim("default", "worker-1", time.time(), limit=4)
        before = COUNTER.counts()
        [found] = await store.stats(["default"])
        spent = COUNTER.counts() - before
        # One query per shard of the open partitions and of each terminal status's, then
        # one fetch of the open jobs' records, and no probe for the previous layout's
        # index (``create`` made the table, so it knows); and one query of the workers'
        # presence records, whatever the shards.
        assert spent.requests[("dynamodb", "Query")] == 8 * 4 + 1
        assert spent.requests[("dynamodb", "BatchGetItem")] == 1
        assert (found.counts[JobStatus.QUEUED], found.counts[JobStatus.RUNNING]) == (26, 4)
        before = COUNTER.counts()
        page = await queue.list(queue="other", status=JobStatus.QUEUED, limit=100)
        spent = COUNTER.counts() - before
        assert spent.requests[("dynamodb", "Query")] == 8  # one queue, eight shards
        assert spent.requests[("dynamodb", "BatchGetItem")] == 1
        assert len(page.jobs) == 30 and page.next_cursor is None
    finally:
        await store.aclose()


async def test_a_store_with_eight_shards_finds_every_job_written_with_four(
    aws_endpoint: str, prefix: str
) -> None:
    old = _open(aws_endpoint, prefix, 4)
    new = _open(aws_endpoint, prefix, 8)
    try:
        before = [r.job for r in await JobQueue(old).enqueue_many(_requests(40))]
        old_running = await old.claim("default", "old-worker", time.time(), limit=5)
        after = [r.job for r in await JobQueue(new).enqueue_many(_requests(40, 1000, "mail"))]
        keys = _index_keys(aws_endpoint, new.table_name)
        assert {int(keys[j.id].split("#")[1]) for j in before} == {0, 1, 2, 3}
        assert max(int(keys[j.id].split("#")[1]) for j in after) >= 4

        listed = await all_ids(JobQueue(new))
        assert sorted(listed) == sorted(j.id for j in before + after)
        acme = await all_ids(JobQueue(new), tenant="acme", queue="default")
        expected = [j.id for j in before + after if j.tenant == "acme" and j.queue == "default"]
        assert sorted(acme) == sorted(expected)
        counts: Counter[JobStatus] = Counter()
        for stats in await new.stats():
            counts.update(stats.counts)
        assert (counts[JobStatus.QUEUED], counts[JobStatus.RUNNING]) == (75, 5)

        # The new store settles a job the old one leased: it ends in a shard of its own count.
        job = old_running[0]
        assert _index_keys(aws_endpoint, new.table_name)[job.id] == f"default#{crc(job.id) % 4}"
        assert await new.complete(job.id, job.lease_token or "", time.time(), {"ok": True})
        done = _index_keys(aws_endpoint, new.table_name)[job.id]
        assert done == f"default#{crc(job.id) % 8}#completed"
        completed = await all_ids(JobQueue(new), status=JobStatus.COMPLETED)
        assert completed == [job.id]

        # Every queued job is older than a zero grace: the reconciler finds all of them.
        report = await new.reconcile(grace=0.0)
        assert report.resent == 75

        # Shrinking is what the docs forbid: four shards no longer see the higher ones.
        seen_by_old = set(await all_ids(JobQueue(old)))
        keys = _index_keys(aws_endpoint, new.table_name)
        hidden = {j for j, key in keys.items() if int(key.split("#")[1]) >= 4}
        assert hidden and not hidden & seen_by_old
    finally:
        await old.aclose()
        await new.aclose()


@pytest.mark.parametrize("value", [0, 257, -4, True, 2.0, "8", None])
def test_a_shard_count_outside_one_to_256_is_refused_before_anything_is_made(
    aws_endpoint: str, prefix: str, value: Any
) -> None:
    with pytest.raises(ValueError, match=r"index_shards must be an int from 1 to 256"):
        SqsJobStore(table_name="t", queue_urls={"default": "https://q"}, index_shards=value)
    before = COUNTER.counts()
    with pytest.raises(ValueError, match=r"index_shards must be an int from 1 to 256"):
        SqsJobStore.create(prefix, endpoint_url=aws_endpoint, index_shards=value)
    assert (COUNTER.counts() - before).requests == {}


@pytest.mark.parametrize("text", ["eight", "0", "300", "-1", "4.0"])
def test_from_env_refuses_a_shard_count_that_is_not_one_to_256(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.setenv("SQSJOBS_TABLE", "jobs")
    monkeypatch.setenv("SQSJOBS_QUEUES", "default=https://sqs.example/jobs")
    monkeypatch.setenv("SQSJOBS_INDEX_SHARDS", text)
    with pytest.raises(ValueError, match=r"SQSJOBS_INDEX_SHARDS|index_shards"):
        SqsJobStore.from_env()


async def test_from_env_reads_the_shard_count(
    aws_endpoint: str, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _open(aws_endpoint, prefix, 4)
    await made.aclose()
    monkeypatch.setenv("SQSJOBS_TABLE", made.table_name)
    urls = ",".join(f"{q}={url}" for q, url in made.queue_urls.items())
    monkeypatch.setenv("SQSJOBS_QUEUES", urls)
    monkeypatch.setenv("SQSJOBS_INDEX_SHARDS", "16")
    store = SqsJobStore.from_env(endpoint_url=aws_endpoint)
    try:
        written = [r.job for r in await JobQueue(store).enqueue_many(_requests(100))]
        keys = _index_keys(aws_endpoint, store.table_name)
        assert all(keys[j.id] == f"{j.queue}#{zlib.crc32(j.id.encode()) % 16}" for j in written)
        assert max(int(keys[j.id].split("#")[1]) for j in written) >= 4
    finally:
        await store.aclose()


def test_every_status_change_writes_the_shard_of_the_configured_count() -> None:
    from sqsjobs.aws.wire import dynamo, transitions
    from sqsjobs.aws.wire.index_keys import IndexedTable

    table = IndexedTable("jobs", 8)
    job_id = next(str(n) for n in range(100) if zlib.crc32(str(n).encode()) % 8 >= 4)
    now = time.time()
    job = (job_id, "default")
    calls = {
        "running": dynamo.claim(table, job_id, "default", "w", "tok", now, 2.0),
        "dead": transitions.dead(table, job, "tok", "boom", now, now + 60),
        "completed": transitions.complete(table, job, "tok", now, None, now + 60),
        "delayed": transitions.retry(table, job_id, "tok", "e", JobStatus.DELAYED, now + 5, now),
        "queued": transitions.release(table, job_id, "tok", "e", now, (JobStatus.QUEUED, now)),
        "cancelled": transitions.cancel(table, job_id, now, now + 60, queue="default"),
    }
    revived = transitions.revive(table, job, ["default"], now)
    expired = transitions.dead_at_lease_end(table, job, "tok", "lease", now, 2.0, now + 60)
    abandoned = transitions.abandoned_dead(table, job, "gone", now, 2.0, now + 60)
    calls |= {"queued#revive": revived, "dead#expire": expired, "dead#abandoned": abandoned}
    wanted = zlib.crc32(job_id.encode()) % 8
    for status, call in calls.items():
        assert call.params["TableName"] == "jobs"
        written = call.params["ExpressionAttributeValues"][":gsi_pk"]["S"]
        assert written == f"{status.split('#')[0]}#{wanted}", status
        assert ":list_pk" not in call.params["ExpressionAttributeValues"]  # format 2: in place


def test_from_record_format_3_a_job_s_end_and_revival_move_its_entry() -> None:
    from sqsjobs.aws.wire import dynamo, transitions
    from sqsjobs.aws.wire.index_keys import IndexedTable

    table = IndexedTable("jobs", 8, moves=True)
    job_id = next(str(n) for n in range(100) if zlib.crc32(str(n).encode()) % 8 >= 4)
    job, now, k = (job_id, "mail"), time.time(), crc(job_id) % 8
    moving = {
        f"mail#{k}#dead": transitions.dead(table, job, "tok", "boom", now, now + 60),
        f"mail#{k}#completed": transitions.complete(table, job, "tok", now, None, now + 60),
        f"mail#{k}#cancelled": transitions.cancel(table, job_id, now, now + 60, queue="mail"),
        f"mail#{k}": transitions.revive(table, job, ["mail"], now),
        f"mail#{k}#dead ": transitions.abandoned_dead(table, job, "gone", now, 2.0, now + 60),
        f"mail#{k}#dead  ": transitions.dead_at_lease_end(
            table, job, "tok", "lease", now, 2.0, now + 60
        ),
        f"mail#{k}#dead   ": transitions.copied(table, job, now),
    }
    for partition, call in moving.items():
        assert call.params["ExpressionAttributeValues"][":list_pk"]["S"] == partition.strip()
    staying = [
        dynamo.claim(table, job_id, "mail", "w", "tok", now, 2.0),
        transitions.retry(table, job_id, "tok", "e", JobStatus.DELAYED, now + 5, now),
        transitions.release(table, job_id, "tok", "e", now, (JobStatus.QUEUED, now)),
        transitions.dead(
            table, job, "tok", "boom", now, now + 60, copy_key="k" * 32
        ),  # its copy owed
        transitions.dead_at_lease_end(
            table, job, "tok", "lease", now, 2.0, now + 60, copy_key="k" * 32
        ),
    ]
    for call in staying:
        assert ":list_pk" not in call.params["ExpressionAttributeValues"]


def crc(job_id: str) -> int:
    return zlib.crc32(job_id.encode())
