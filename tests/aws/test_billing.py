"""What one job costs as DynamoDB on-demand bills it, from the emulator's real item images.

Today's layout keeps the status in the list index's partition key (``gsi_pk =
"{status}#{shard}"``, projection ALL), so every status change deletes one index entry and
puts another, each as large as the whole item: a small job bills 1 + 1 WRU at put,
1 + 2 at claim and 1 + 2 at complete (8 in all), and a 10 KB payload multiplies each
write by its kilobytes, index copies included.
"""

from __future__ import annotations

import json
import time
import zlib
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sqsjobs import JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing_billing import item_size
from sqsjobs.testing_meter import Read, Write, totals

from .emulator import METER


async def run_one_job(store: SqsJobStore, prefix: str, payload: Any) -> list[Write | Read]:
    """Enqueue, claim and complete one job; the meter's records of this store's table."""
    queue = JobQueue(store)

    async def bill(ctx: JobContext) -> str:
        return "done"

    worker = JobWorker(queue, {"bill": bill}, queues=["default"])
    with METER.record() as records:
        result = await queue.enqueue("bill", payload, tenant="cafe-nord")
        assert await worker.run_once()
        job = await store.get(result.job.id, time.time())
    assert job is not None and job.status == "completed"
    return [record for record in records if record.table.startswith(prefix)]


def shard(record: Write) -> str:
    image = record.after or record.before
    assert image is not None
    return f"#{zlib.crc32(image['id']['S'].encode()) % 4}"


async def test_a_small_job_bills_eight_write_units_two_of_them_per_status_change(
    store: SqsJobStore, prefix: str
) -> None:
    records = await run_one_job(store, prefix, {"order": "Zoë-1", "qty": 2})
    put, claim, complete, get = records
    assert isinstance(put, Write) and isinstance(claim, Write) and isinstance(complete, Write)
    assert [put.action, claim.action, complete.action] == ["PutItem", "UpdateItem", "UpdateItem"]
    k = shard(put)
    assert [(c.index_name, c.partition, c.units, c.kind) for c in put.charges] == [
        (None, put.charges[0].partition, 1, "put"),
        ("by_status", f"queued{k}", 1, "put"),
    ]
    assert [(c.index_name, c.partition, c.units) for c in claim.charges[1:]] == [
        ("by_status", f"queued{k}", 1),
        ("by_status", f"running{k}", 1),
    ]
    assert [(c.index_name, c.partition, c.units) for c in complete.charges[1:]] == [
        ("by_status", f"running{k}", 1),
        ("by_status", f"completed{k}", 1),
    ]
    assert [put.units, claim.units, complete.units] == [2, 3, 3]
    # The images are the stored records, status by status.
    assert put.before is None and put.after is not None
    assert claim.before == put.after
    assert claim.after is not None and claim.after["status"] == {"S": "running"}
    assert complete.before == claim.after
    assert complete.after is not None and complete.after["result"] == {"S": '"done"'}
    assert get == Read(get.table, "GetItem", None, 1, 1.0)  # strongly consistent, < 4 KB
    assert totals(records) == (8, 1.0)


async def test_a_ten_kilobyte_payload_bills_its_kilobytes_at_every_write_index_included(
    store: SqsJobStore, prefix: str
) -> None:
    text = "ü" * 5_000  # 10,000 bytes in UTF-8, as the record stores it
    records = await run_one_job(store, prefix, {"note": text})
    put, claim, complete, get = records
    assert isinstance(put, Write) and isinstance(claim, Write) and isinstance(complete, Write)
    assert put.after is not None
    stored = put.after["payload"]["S"]
    assert json.loads(stored) == {"note": text}
    # 10,000 bytes of payload plus the record's other attributes: between 10 and 11 KB.
    assert 10 * 1024 < item_size(put.after) < 11 * 1024
    assert [c.units for c in put.charges] == [11, 11]
    assert [c.units for c in claim.charges] == [11, 11, 11]
    assert [c.units for c in complete.charges] == [11, 11, 11]
    assert get == Read(get.table, "GetItem", None, 1, 3.0)  # 11 KB: three 4 KB units
    assert totals(records) == (22 + 33 + 33, 3.0)


async def test_a_duplicate_enqueue_bills_one_refused_write_and_no_index(
    store: SqsJobStore, prefix: str
) -> None:
    queue = JobQueue(store)
    first = await queue.enqueue("bill", {"order": 7}, idempotency_key="order-7")
    with METER.record() as records:
        again = await queue.enqueue("bill", {"order": 7}, idempotency_key="order-7")
    assert again.duplicate and again.job.id == first.job.id
    (refused,) = [record for record in records if record.table.startswith(prefix)]
    assert isinstance(refused, Write) and not refused.succeeded
    assert refused.before == refused.after  # nothing was written
    assert [(c.index_name, c.units, c.kind) for c in refused.charges] == [(None, 1, "refused")]


async def test_count_queries_bill_the_index_entries_they_evaluate(
    store: SqsJobStore, prefix: str
) -> None:
    queue = JobQueue(store)
    for n in range(3):  # entries of about 5.1 KB: 4,700 bytes of payload each
        await queue.enqueue("bill", {"note": "ß" * 2_350, "n": n})
    with METER.record() as records:
        await store.stats(["default"])
    reads = [record for record in records if record.table.startswith(prefix)]
    assert len(reads) == 24  # six statuses, four shards each
    assert all(isinstance(read, Read) for read in reads)
    queries = [read for read in reads if isinstance(read, Read)]
    assert {(read.action, read.index_name) for read in queries} == {("Query", "by_status")}
    assert sum(read.evaluated for read in queries) == 3
    # Eventually consistent, rounded over the sum: half a unit per 4 KB, at least half.
    by_count = {0: 0.5, 1: 1.0, 2: 1.5, 3: 2.0}
    assert [read.units for read in queries] == [by_count[read.evaluated] for read in queries]


def test_a_request_the_meter_cannot_read_reaches_the_emulator_unmetered(
    aws_endpoint: str, prefix: str
) -> None:
    dynamodb = boto3.client("dynamodb", endpoint_url=aws_endpoint)
    with METER.record() as records, pytest.raises(ClientError) as refused:
        dynamodb.put_item(TableName=f"{prefix}-missing", Item={"pk": {"S": "job#1"}})
    dynamodb.close()
    assert refused.value.response["Error"]["Code"] == "ResourceNotFoundException"
    assert records == []


def test_batch_and_transactional_writes_are_priced_item_by_item(
    store: SqsJobStore, aws_endpoint: str, prefix: str
) -> None:
    table = store.table_name
    dynamodb = boto3.client("dynamodb", endpoint_url=aws_endpoint)

    def item(n: int) -> dict[str, dict[str, str]]:
        return {
            "pk": {"S": f"job#{n}"},
            "gsi_pk": {"S": "queued#0"},
            "gsi_sk": {"S": f"default#{time.time():020.6f}#{n}"},
        }

    with METER.record() as records:
        dynamodb.batch_write_item(
            RequestItems={table: [{"PutRequest": {"Item": item(n)}} for n in (1, 2)]}
        )
        dynamodb.batch_write_item(
            RequestItems={table: [{"DeleteRequest": {"Key": {"pk": {"S": "job#2"}}}}]}
        )
        dynamodb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": item(3)}},
                {
                    "ConditionCheck": {
                        "TableName": table,
                        "Key": {"pk": {"S": "job#1"}},
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
            ]
        )
    dynamodb.close()
    writes = [record for record in records if isinstance(record, Write)]
    assert [(w.action, [(c.index_name, c.units, c.kind) for c in w.charges]) for w in writes] == [
        ("BatchWriteItem", [(None, 1, "put"), ("by_status", 1, "put")]),
        ("BatchWriteItem", [(None, 1, "put"), ("by_status", 1, "put")]),
        ("BatchWriteItem", [(None, 1, "delete"), ("by_status", 1, "delete")]),
        ("TransactWriteItems", [(None, 2, "put"), ("by_status", 2, "put")]),
        ("TransactWriteItems", [(None, 2, "check")]),  # checked, not written: table only
    ]
