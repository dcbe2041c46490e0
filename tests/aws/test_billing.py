"""What one job costs as DynamoDB on-demand bills it, from the emulator's real item images.

The list index ``by_queue`` is keyed by ``list_pk`` (the job's open partition until it
ends, then its terminal status's) and ``list_sk`` (written once), and projects only
``phase``, ``name``, ``tenant`` and ``expires_at``, so a claim costs the index nothing
and the end of a job moves one small entry (a delete and a put): a small job bills
1 + 1 WRU at put, 1 at claim and 1 + 1 + 1 at complete (6 in all). Record format 2
ended the entry in place for one unit less, and kept the history in the partitions
every reader of open work reads. The previous layout (status in the index key,
projection ALL) billed 8, and copied the payload into the index at every write.
"""

from __future__ import annotations

import base64
import json
import time
import zlib
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sqsjobs import JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing.billing import item_size
from sqsjobs.testing.meter import Read, Write, totals
from sqsjobs.testing.payloads import json_size, order_document, random_document

from .emulator import METER

pytestmark = pytest.mark.usefixtures("one_pause_read")


async def run_one_job(store: SqsJobStore, prefix: str, payload: Any) -> list[Write | Read]:
    """Enqueue, claim and complete one job; the meter's records of this store's table."""
    queue = JobQueue(store, payload_max_bytes=200 * 1024)

    async def bill(ctx: JobContext) -> str:
        return "done"

    worker = JobWorker(queue, {"bill": bill}, queues=["default"])
    await store.paused(time.time())  # read now: the claim below trusts it (``one_pause_read``)
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


async def test_a_small_job_bills_six_write_units_and_its_claim_none_in_the_index(
    store: SqsJobStore, prefix: str
) -> None:
    records = await run_one_job(store, prefix, {"order": "Zoë-1", "qty": 2})
    put, claim, complete, get = records
    assert isinstance(put, Write) and isinstance(claim, Write) and isinstance(complete, Write)
    assert [put.action, claim.action, complete.action] == ["PutItem", "UpdateItem", "UpdateItem"]
    k = shard(put)
    assert [(c.index_name, c.partition, c.units, c.kind) for c in put.charges] == [
        (None, put.charges[0].partition, 1, "put"),
        ("by_queue", f"default{k}", 1, "put"),
    ]
    assert [(c.index_name, c.units) for c in claim.charges] == [(None, 1)]
    assert [(c.index_name, c.partition, c.units, c.kind) for c in complete.charges[1:]] == [
        ("by_queue", f"default{k}", 1, "delete"),
        ("by_queue", f"default{k}#completed", 1, "put"),
    ]
    assert [put.units, claim.units, complete.units] == [2, 1, 3]
    # The images are the stored records, status by status.
    assert put.before is None and put.after is not None
    assert put.after["phase"] == {"S": "open"} and "gsi_sk" not in put.after
    assert claim.before == put.after
    assert claim.after is not None and claim.after["status"] == {"S": "running"}
    assert claim.after["phase"] == {"S": "open"}
    assert complete.before == claim.after
    assert complete.after is not None and complete.after["result"] == {"S": '"done"'}
    assert complete.after["phase"] == {"S": "completed"}
    assert get == Read(get.table, "GetItem", None, 1, 1.0)  # strongly consistent, < 4 KB
    assert totals(records) == (6, 1.0)


@pytest.mark.parametrize("kilobytes", [1, 10, 100])
async def test_after_the_put_a_long_payload_costs_what_a_short_one_does(
    store: SqsJobStore, prefix: str, kilobytes: int
) -> None:
    payload = random_document(kilobytes * 1024, seed=kilobytes)  # base64: compresses least
    assert json_size(payload) == kilobytes * 1024
    records = await run_one_job(store, prefix, payload)
    body, put, claim, read, complete, get, get_body = records
    assert isinstance(body, Write) and isinstance(put, Write)
    assert isinstance(claim, Write) and isinstance(complete, Write)
    assert body.after is not None and put.after is not None
    # The payload is written once, in its body item, before the record.
    assert body.after["pk"]["S"].startswith("body#") and "payload" not in put.after
    stored = base64.b64decode(body.after["z"]["B"])  # the wire's form of a binary value
    assert json.loads(zlib.decompress(stored)) == payload  # stored compressed
    body_units = -(-item_size(body.after) // 1024)
    # base64 compresses to three quarters: the body bills that, not the payload's KB.
    assert body_units == {1: 1, 10: 8, 100: 76}[kilobytes]
    assert [(c.index_name, c.units) for c in body.charges] == [(None, body_units)]
    assert [(c.index_name, c.units) for c in put.charges] == [(None, 1), ("by_queue", 1)]
    # Claim and completion are what they cost for a small payload: 1, then 1 + 1 + 1.
    assert [c.units for c in claim.charges] == [1]
    assert [c.units for c in complete.charges] == [1, 1, 1]
    # The claim reads the body, eventually consistent: half a unit per 4 KB.
    assert isinstance(read, Read) and read.action == "BatchGetItem"
    assert read.units == -(-item_size(body.after) // 4096) / 2
    assert isinstance(get, Read) and isinstance(get_body, Read)  # get: the record, its body
    assert totals(records)[0] == body_units + 6


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


async def test_stats_reads_small_index_entries_and_the_records_of_open_jobs(
    store: SqsJobStore, prefix: str
) -> None:
    queue = JobQueue(store)
    for n in range(3):  # 4,700 bytes of payload each, kept in body items
        await queue.enqueue("bill", {"note": "ß" * 2_350, "n": n}, tenant=f"tenant-{n}")
    await store.stats(["default"])  # learns the table's indexes and the queue's DLQ
    with METER.record() as records:
        await store.stats(["default"])
    reads = [record for record in records if record.table.startswith(prefix)]
    assert all(isinstance(read, Read) for read in reads)
    queries = [read for read in reads if isinstance(read, Read) and read.action == "Query"]
    assert {read.index_name for read in queries} == {"by_queue"}
    # One per shard of the queue's open partitions, and of each terminal status's; and
    # one of the workers' presence records (none here).
    assert len(queries) == 4 * 4 + 1
    assert sum(read.evaluated for read in queries) == 3
    # Entries of about 150 bytes: half a unit (eventually consistent) per query.
    assert [read.units for read in queries] == [0.5] * 17
    (fetch,) = [read for read in reads if isinstance(read, Read) and read.action == "BatchGetItem"]
    # The records only (stats needs no payload), each rounded to 4 KB: half a unit each.
    assert (fetch.evaluated, fetch.units) == (3, 1.5)


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
            "list_pk": {"S": "default#0"},
            "list_sk": {"S": f"{time.time():020.6f}#{n}"},
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
        ("BatchWriteItem", [(None, 1, "put"), ("by_queue", 1, "put")]),
        ("BatchWriteItem", [(None, 1, "put"), ("by_queue", 1, "put")]),
        ("BatchWriteItem", [(None, 1, "delete"), ("by_queue", 1, "delete")]),
        ("TransactWriteItems", [(None, 2, "put"), ("by_queue", 2, "put")]),
        ("TransactWriteItems", [(None, 2, "check")]),  # checked, not written: table only
    ]


async def test_a_kilobyte_of_order_json_is_kept_compressed_in_the_record_at_six_units(
    store: SqsJobStore, prefix: str
) -> None:
    payload = order_document(1024, seed=7)
    records = await run_one_job(store, prefix, payload)
    put = records[0]
    assert isinstance(put, Write) and put.after is not None
    assert "payload" not in put.after and "body_until" not in put.after  # no body item
    assert json.loads(zlib.decompress(base64.b64decode(put.after["payload_z"]["B"]))) == payload
    assert [r.action for r in records] == ["PutItem", "UpdateItem", "UpdateItem", "GetItem"]
    assert totals(records) == (6, 1.0)


async def test_a_payload_of_500_bytes_still_keeps_the_job_at_six_write_units(
    store: SqsJobStore, prefix: str
) -> None:
    payload = {"note": "Grüße aus Köln, " * 25 + "Zoë-4711-1234"}  # 500 bytes of compact JSON
    assert len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()) == 500
    records = await run_one_job(store, prefix, payload)
    writes = [record for record in records if isinstance(record, Write)]
    assert max(item_size(w.after) for w in writes) <= 1024
    assert totals(records)[0] == 6
