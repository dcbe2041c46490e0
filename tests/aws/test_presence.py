"""Presence records in the job table: what they bill, where they sit, who reads past them.

A worker's record is one item (``worker#{id}``) with an entry in the list index's
``!workers`` partition. Every write puts the whole item and moves ``expires_at``, which
the index projects, so each write bills the item (1 WRU under 1 KB) and the index entry
(1 WRU): a worker writing every 30 s bills 240 WRU an hour. Listing the live ones is a
``Query`` of that partition and a ``BatchGetItem`` of the items, whatever the table keeps.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import boto3
import pytest

from sqsjobs import Backoff, JobQueue, JobRegistry, JobStatus
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.history import history_items, keep_history
from sqsjobs.aws.wire.presence import INLINE_NAMES, PRESENCE_PARTITION
from sqsjobs.core.presence import PRESENCE_INTERVAL
from sqsjobs.testing.billing import item_size
from sqsjobs.testing.meter import Read, Write, totals
from sqsjobs.worker.presence import Presence
from sqsjobs.worker.run import RunSettings

from ..support.clock import FakeClock
from .emulator import METER, shared_endpoint

HOUR = 3600.0


def keeper(store: SqsJobStore, clock: FakeClock, names: list[str]) -> Presence:
    """The presence keeper a ``JobWorker`` of ``names`` runs, on ``clock``."""
    registry = JobRegistry()
    for name in names:
        registry.add(name, lambda ctx: None)
    settings = RunSettings(
        store=store,
        registry=registry,
        backoff=Backoff(),
        payload_max_bytes=65536,
        clock=clock,
        logger=logging.getLogger("sqsjobs"),
        worker_id="worker-3f9c2a7d41e0",
    )
    return Presence(settings, ["default", "other"], 8)


def mine(records: list[Write | Read], store: SqsJobStore) -> list[Write | Read]:
    return [record for record in records if record.table == store.table_name]


# A registry of a real service: twenty handlers.
NAMES = [
    f"{area}.{verb}"
    for area in ("invoice", "report", "mail", "export")
    for verb in ("build", "send", "retry", "archive", "notify")
]


async def test_a_worker_hour_bills_240_write_units_and_its_stop_2(store: SqsJobStore) -> None:
    clock = FakeClock()
    presence = keeper(store, clock, NAMES)
    with METER.record() as records:
        for beat in range(int(HOUR / PRESENCE_INTERVAL)):  # at 0 s, 30 s, ... 3,570 s
            presence.claimed("default", clock())
            await presence.beat(running=beat % 9)
            clock.advance(PRESENCE_INTERVAL)
        await presence.end()
    writes = mine(records, store)
    assert all(isinstance(write, Write) for write in writes)
    *beats, end = [write for write in writes if isinstance(write, Write)]
    assert len(beats) == 120
    first, *rest = beats
    # The first write puts the item and its index entry; each later one rewrites both
    # (``expires_at`` moved), in the presence partition, never a queue's.
    assert [(c.index_name, c.partition, c.units, c.kind) for c in first.charges] == [
        (None, "worker#worker-3f9c2a7d41e0", 1, "put"),
        ("by_queue", PRESENCE_PARTITION, 1, "put"),
    ]
    assert {
        tuple((c.index_name, c.partition, c.units, c.kind) for c in write.charges) for write in rest
    } == {
        (
            (None, "worker#worker-3f9c2a7d41e0", 1, "update"),
            ("by_queue", PRESENCE_PARTITION, 1, "update"),
        )
    }
    assert [(c.index_name, c.units) for c in end.charges] == [(None, 1), ("by_queue", 1)]
    assert end.action == "UpdateItem"
    assert totals(beats) == (240, 0.0)
    assert totals([end]) == (2, 0.0)
    # Twenty handler names leave the item well under the 1 KB that one unit covers.
    assert first.after is not None and item_size(first.after) < 700


async def test_a_registry_of_many_names_stays_within_one_write_unit(store: SqsJobStore) -> None:
    clock = FakeClock()
    names = [
        f"team{t:02d}.{verb}_{n}" for t in range(12) for verb in ("sync", "send") for n in range(4)
    ]
    assert len(",".join(names)) > INLINE_NAMES * 2
    presence = keeper(store, clock, names)
    with METER.record() as records:
        await presence.beat(running=0)
    (write,) = mine(records, store)
    assert isinstance(write, Write) and write.after is not None
    assert "names_z" in write.after and "names" not in write.after
    assert write.units == 2
    (listed,) = await store.presences(clock())
    assert listed.names == tuple(sorted(names))


async def test_listing_reads_the_presence_partition_whatever_the_table_keeps(
    store: SqsJobStore, pytestconfig: pytest.Config
) -> None:
    now = time.time()
    clock = FakeClock(now)
    for n in range(3):
        presence = keeper(store, clock, NAMES)
        presence.worker_id = f"worker-{n}"
        await presence.beat(running=n)
    with METER.record() as before:
        assert [p.worker_id for p in await store.presences(now)] == [
            f"worker-{n}" for n in range(3)
        ]
    dynamodb = boto3.client("dynamodb", endpoint_url=shared_endpoint(pytestconfig))
    try:
        history = history_items("default", 600, ended_before=now - 3_700, seed=5)
        keep_history(dynamodb, store.table_name, history)
    finally:
        dynamodb.close()
    with METER.record() as after:
        assert len(await store.presences(now)) == 3
    reads = [(r.action, r.index_name, r.evaluated, r.units) for r in mine(before, store)]
    assert reads == [("Query", "by_queue", 3, 0.5), ("BatchGetItem", None, 3, 1.5)]
    assert [(r.action, r.index_name, r.evaluated, r.units) for r in mine(after, store)] == reads
    assert not any(r.action == "Scan" for r in mine(before + after, store))


async def test_stats_lists_and_the_reconciler_read_past_presence_items(
    store: SqsJobStore,
) -> None:
    """Beside a presence item in the table and in the index: every job reader of this
    release sees jobs only (the readers of 0.2 query the same queue partitions:
    tests/upgrade/test_from_0_2.py)."""
    now = time.time()
    await keeper(store, FakeClock(now), ["report.build"]).beat(running=0)
    queue = JobQueue(store)
    waiting = (await queue.enqueue("report.buld", {"month": "2031-02"})).job
    page = await queue.list()
    assert [job.id for job in page.jobs] == [waiting.id]
    default, other = await store.stats()
    assert (default.counts[JobStatus.QUEUED], default.workers, other.workers) == (1, 1, 1)
    assert default.unserved_names == {"report.buld": 1}
    assert default.oldest_queued_at is not None
    report = await store.reconcile(grace=0.0)
    assert report.resent <= 1 and (report.dead, report.copied) == (0, 0)  # jobs only


def test_an_unreadable_item_is_skipped_not_fatal(
    store: SqsJobStore, pytestconfig: pytest.Config
) -> None:
    """An item of a later presence format, or one missing a field, is left out."""
    client: Any = boto3.client("dynamodb", endpoint_url=shared_endpoint(pytestconfig))
    try:
        for worker_id, version in (("worker-later", "2"), ("worker-broken", "1")):
            client.put_item(
                TableName=store.table_name,
                Item={
                    "pk": {"S": f"worker#{worker_id}"},
                    "list_pk": {"S": PRESENCE_PARTITION},
                    "list_sk": {"S": worker_id},
                    "v": {"N": version},
                    "expires_at": {"N": str(time.time() + 60)},
                },
            )
    finally:
        client.close()
    assert store.sync.presences(time.time()) == []
