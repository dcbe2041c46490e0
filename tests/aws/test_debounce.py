"""Debounced enqueues on ``SqsJobStore`` over the emulator (``flows.debounce``): many
producers' burst is one job with the last payload written; each enqueue but the first
costs one conditional write and no read; cancels, long payloads and a producer that died
half-way leave the key usable."""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from typing import Any

import pytest

from sqsjobs import JobContext, JobQueue, JobStatus, JobWorker, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire import debounce as slots
from sqsjobs.testing.meter import Write, totals

from .emulator import COUNTER, METER

PRODUCERS = 5
EACH = 40  # enqueues per producer: 200 in all, over about 3 s
DEBOUNCE = 2.0


def twin(store: SqsJobStore, endpoint: str) -> SqsJobStore:
    """The store as another producer process opens it."""
    return SqsJobStore(
        table_name=store.table_name, queue_urls=store.queue_urls, endpoint_url=endpoint
    )


async def test_five_producers_burst_is_one_job_with_the_last_payload_written(
    store: SqsJobStore, aws_endpoint: str
) -> None:
    producers = [twin(store, aws_endpoint) for _ in range(PRODUCERS)]
    ids: list[set[str]] = [set() for _ in producers]

    def produce(index: int) -> None:
        queue = SyncJobQueue(producers[index])
        for n in range(EACH):
            payload = {"producer": index, "n": n, "kunde": "Zoë"}
            result = queue.enqueue(
                "search.reindex", payload, debounce_key="catalog-7", debounce=DEBOUNCE
            )
            ids[index].add(result.job.id)
            time.sleep(0.075)

    before = COUNTER.counts()
    with METER.record() as metered:
        threads = [threading.Thread(target=produce, args=(i,)) for i in range(PRODUCERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    spent = COUNTER.counts() - before
    [job_id] = set().union(*ids)  # every enqueue named one job
    queue = JobQueue(store)
    pending = await queue.get(job_id)
    assert pending is not None and pending.status is JobStatus.DELAYED
    assert pending.payload["n"] == EACH - 1  # a producer's last: the last write applied
    # Cost: one conditional write per enqueue, no read; the burst's first also wrote the
    # record and sent its one message.
    enqueues = PRODUCERS * EACH
    assert spent.dynamodb_reads == 0, spent.requests
    assert spent.requests[("dynamodb", "UpdateItem")] == enqueues, spent.requests
    assert spent.requests[("dynamodb", "PutItem")] == 1, spent.requests
    assert spent.service("sqs") == 1, spent.requests
    writes = [r for r in metered if r.table == store.table_name and isinstance(r, Write)]
    wru, _ = totals(writes)
    print(f"\ndebounced enqueue: {wru / enqueues:.2f} WRU each ({wru:g} for {enqueues})")
    assert wru / enqueues < 1.1
    ran: list[dict[str, Any]] = []

    async def reindex(ctx: JobContext) -> None:
        ran.append(ctx.payload)

    async with JobWorker(queue, {"search.reindex": reindex}):
        deadline = time.monotonic() + 30
        while not ran:
            assert time.monotonic() < deadline, "the burst's job never ran"
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)  # a second run, were there one, would be under way
    assert ran == [pending.payload]
    done = await queue.get(job_id)
    assert done is not None and done.status is JobStatus.COMPLETED
    for producer in producers:
        producer.close()


async def test_get_shows_the_latest_enqueue_and_a_cancel_ends_the_burst(
    store: SqsJobStore,
) -> None:
    queue = JobQueue(store)
    first = await queue.enqueue("mail.digest", {"v": 1}, debounce_key="digest", debounce=60)
    again = await queue.enqueue("mail.digest", {"v": 2}, debounce_key="digest", debounce=60)
    assert again.duplicate and again.job.id == first.job.id
    shown = await queue.get(first.job.id)
    assert shown is not None and shown.payload == {"v": 2}
    assert shown.run_at >= again.job.run_at and shown.debounce_key == "digest"
    assert await queue.cancel(first.job.id)
    after = await queue.enqueue("mail.digest", {"v": 3}, debounce_key="digest", debounce=60)
    assert not after.duplicate and after.job.id != first.job.id


async def test_a_long_payload_then_a_short_one_runs_the_short_one(store: SqsJobStore) -> None:
    """The burst's first payload is in a body item; the merge puts the last one in the
    record and drops the body's pointer."""
    queue = JobQueue(store)
    long = {"rows": [secrets.token_hex(90) for _ in range(300)]}  # near 64 KiB, incompressible
    first = await queue.enqueue("report.build", long, debounce_key="r", debounce=0.5)
    await queue.enqueue("report.build", {"rows": ["Überblick"]}, debounce_key="r", debounce=0.5)
    ran: list[Any] = []
    async with JobWorker(queue, {"report.build": lambda payload: ran.append(payload)}):
        deadline = time.monotonic() + 30
        while not ran:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
    assert ran == [{"rows": ["Überblick"]}]
    done = await queue.get(first.job.id)
    assert done is not None and done.payload == {"rows": ["Überblick"]}


async def test_a_producer_that_died_between_slot_and_record_frees_the_key_in_time(
    store: SqsJobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slots, "STRANDED", 1.0)
    pk = slots.slot_pk("default", None, "orphan")
    now = time.time()
    # What the dead producer's one write left: a slot naming a job with no record.
    store.sync._state.run_sync(_left_behind(store.table_name, pk, now))
    queue = JobQueue(store)
    held = await queue.enqueue("x.y", {"n": 1}, debounce_key="orphan", debounce=0.2)
    assert held.duplicate and held.job.id == "never-written"  # its burst is under way
    await asyncio.sleep(1.5)  # past that burst's run_at and STRANDED
    fresh = await queue.enqueue("x.y", {"n": 2}, debounce_key="orphan", debounce=0.2)
    assert not fresh.duplicate and fresh.job.id != "never-written"
    record = await queue.get(fresh.job.id)
    assert record is not None and record.payload == {"n": 2}


def _left_behind(table: str, pk: str, now: float) -> Any:
    yield slots.bump(table, pk, "never-written", '{"n":0}', now + 0.2, now)


async def test_a_transaction_or_a_batch_refuses_a_debounce_key(store: SqsJobStore) -> None:
    from sqsjobs import EnqueueRequest, JobConfigError

    request = EnqueueRequest("x.y", {"n": 1}, debounce_key="k", debounce=5)
    queue = JobQueue(store)
    with pytest.raises(JobConfigError, match="debounce key"):
        await queue.enqueue_in_transaction([request], [])
    with pytest.raises(JobConfigError, match="debounce key"):
        await queue.batch([request])
