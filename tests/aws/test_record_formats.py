"""Which record formats a table holds: records of formats 1, 2 and 3 on one table.

An upgrade's last step waits until no record of the format before the switch is left
(CHANGELOG.md). Stores writing each format share the emulator's table here, as a rolling
upgrade's releases do; ``record_formats`` counts what each wrote, open, ended and expired,
and the scan's cost is metered.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import boto3
import pytest

from sqsjobs import JobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.flows.record_formats import (
    READ_UNITS_PER_1000,
    FormatCount,
    RecordFormats,
    record_formats,
)
from sqsjobs.aws.wire.history import history_items, keep_history
from sqsjobs.aws.wire.protocol import Call, drive
from sqsjobs.core.times import utc
from sqsjobs.testing.meter import Read

from .emulator import METER, unique_prefix
from .fakes import NOW, layout


@pytest.fixture
async def formats(store: SqsJobStore, aws_endpoint: str) -> AsyncIterator[dict[int, SqsJobStore]]:
    """A store per record format, all on ``store``'s table and queues (3 is ``store``)."""
    made = {
        version: SqsJobStore(
            table_name=store.table_name,
            queue_urls=store.queue_urls,
            endpoint_url=aws_endpoint,
            record_format=version,
        )
        for version in (1, 2)
    }
    try:
        yield {**made, 3: store}
    finally:
        for each in made.values():
            await each.aclose()


def retention_end(dynamodb: Any, table: str, job_id: str) -> float:
    item = dynamodb.get_item(TableName=table, Key={"pk": {"S": f"job#{job_id}"}})["Item"]
    return float(item["expires_at"]["N"])


async def test_records_of_each_format_are_counted_open_ended_and_expired(
    formats: dict[int, SqsJobStore], dynamodb: Any
) -> None:
    one, two, three = (JobQueue(formats[v]) for v in (1, 2, 3))
    table = formats[3].table_name
    await one.enqueue("invoice.send", {"n": 1})
    ended_one = (await one.enqueue("invoice.send", {"n": 2}, delay=600)).job
    assert await one.cancel(ended_one.id)
    ended_two = (await two.enqueue("invoice.send", {"n": 3}, delay=600)).job
    assert await two.cancel(ended_two.id)
    gone_two = (await two.enqueue("invoice.send", {"n": 4}, delay=600)).job
    assert await two.cancel(gone_two.id)
    dynamodb.update_item(  # past its retention: DynamoDB's TTL has not deleted it yet
        TableName=table,
        Key={"pk": {"S": f"job#{gone_two.id}"}},
        UpdateExpression="SET expires_at = :past",
        ExpressionAttributeValues={":past": {"N": str(time.time() - 60)}},
    )
    # A long payload's body item is scanned too, and is no record.
    await three.enqueue("report.build", {"blob": secrets.token_hex(800)})
    await three.enqueue("report.build", {"n": 5})

    found = await formats[3].record_formats()
    assert (found.table, found.writes, found.items) == (table, 3, 7)
    last_one = utc(retention_end(dynamodb, table, ended_one.id))
    last_two = utc(retention_end(dynamodb, table, ended_two.id))
    assert found.formats == (
        FormatCount(1, open=1, ended=1, expired=0, last_expires_at=last_one),
        FormatCount(2, open=0, ended=1, expired=1, last_expires_at=last_two),
        FormatCount(3, open=2),
    )
    assert [f.format for f in found.older_than(3)] == [1, 2]
    assert [f.format for f in found.older_than(2)] == [1]
    # The blocking face reads the same; a format-1 store writes format 1 and says so.
    assert formats[1].sync.record_formats().formats == found.formats
    assert formats[1].sync.record_formats().writes == 1


async def test_once_the_old_records_have_ended_and_expired_nothing_older_is_left(
    formats: dict[int, SqsJobStore], dynamodb: Any
) -> None:
    job = (await JobQueue(formats[1]).enqueue("invoice.send", {"n": 1}, delay=600)).job
    assert [f.format for f in (await formats[3].record_formats()).older_than(3)] == [1]
    assert await JobQueue(formats[3]).cancel(job.id)  # ended by the new release
    ended = await formats[3].record_formats()
    assert ended.formats[0].remaining == 1 and ended.older_than(3)
    dynamodb.update_item(
        TableName=formats[3].table_name,
        Key={"pk": {"S": f"job#{job.id}"}},
        UpdateExpression="SET expires_at = :past",
        ExpressionAttributeValues={":past": {"N": str(time.time() - 1)}},
    )
    gone = await formats[3].record_formats()
    assert gone.formats == (FormatCount(1, expired=1),)
    assert gone.older_than(3) == ()


def test_the_scan_reads_every_page_asking_for_four_attributes_only() -> None:
    pages = [
        {
            "Items": [
                {"pk": {"S": "job#a"}, "v": {"N": "2"}, "status": {"S": "queued"}},
                {"pk": {"S": "body#a#1"}, "expires_at": {"N": str(NOW + 9)}},
            ],
            "LastEvaluatedKey": {"pk": {"S": "body#a#1"}},
        },
        {
            "Items": [
                {"pk": {"S": "limit#x#0"}},
                {
                    "pk": {"S": "job#b"},
                    "v": {"N": "2"},
                    "status": {"S": "dead"},
                    "expires_at": {"N": str(NOW + 50)},
                },
                {
                    "pk": {"S": "job#c"},
                    "v": {"N": "3"},
                    "status": {"S": "completed"},
                    "expires_at": {"N": str(NOW - 1)},
                },
                {"pk": {"S": "job#d"}, "updated_at": {"N": "1"}},  # a bare UpdateItem's
            ]
        },
    ]
    calls: list[Call] = []
    heard: list[int] = []

    def send(call: Call) -> dict[str, Any]:
        calls.append(call)
        return pages[len(calls) - 1]

    found = drive(record_formats(layout(), NOW, heard.append), send)
    assert [(c.service, c.operation) for c in calls] == [("dynamodb", "scan")] * 2
    assert "ExclusiveStartKey" not in calls[0].params
    assert calls[1].params["ExclusiveStartKey"] == {"pk": {"S": "body#a#1"}}
    assert sorted(calls[0].params["ExpressionAttributeNames"].values()) == [
        "expires_at",
        "pk",
        "status",
        "v",
    ]
    assert "ConsistentRead" not in calls[0].params  # eventually consistent: half the units
    assert heard == [2, 6]
    assert found == RecordFormats(
        "jobs",
        3,
        (
            FormatCount(2, open=1, ended=1, last_expires_at=utc(NOW + 50)),
            FormatCount(3, expired=1),
        ),
        6,
    )


async def test_a_scan_costs_about_its_stated_read_units_per_1000_records(
    aws_endpoint: str,
) -> None:
    """``READ_UNITS_PER_1000``, which the command's help quotes, is what this measures."""
    store = SqsJobStore.create(unique_prefix(), endpoint_url=aws_endpoint)
    client = boto3.client("dynamodb", endpoint_url=aws_endpoint)
    try:
        now = time.time()
        for version in (1, 2, 3):  # 999 ended records, a third of each format
            items = history_items(
                "default", 333, ended_before=now, record_format=version, seed=version
            )
            keep_history(client, store.table_name, items)
        with METER.record() as records:
            found = store.sync.record_formats()
        assert sum(f.remaining for f in found.formats) == 999
        units = sum(r.units for r in records if isinstance(r, Read))
        assert {r.action for r in records} == {"Scan"}
        assert READ_UNITS_PER_1000 * 0.85 <= units <= READ_UNITS_PER_1000 * 1.15, units
    finally:
        client.close()
        store.close()
