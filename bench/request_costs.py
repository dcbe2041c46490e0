"""AWS requests per job by scenario, counted by the emulator, priced at list prices.

Request counts are deterministic, so this is a measurement of what AWS would bill, not
of the emulator's speed. Scenarios:

- happy path, alone: one job enqueued and run by itself (nothing to batch with);
- happy path, busy: 100 jobs through ``enqueue_many`` and a worker at concurrency 10;
  every store here has the default priority lane, so this is also what the lane costs
  jobs that never use it;
- busy with urgent jobs: the same, one job in ten of priority 5 (a copy to the lane);
- one retry: a job that fails once, then succeeds;
- idempotent duplicate: the second ``enqueue`` of a request with the same key;
- payload of 1, 10 and 100 KB: the happy path alone with a payload of that many KB, an
  order document (JSON that compresses as real JSON does) and base64 of random bytes
  (the worst case: long payloads are stored compressed), ``sqsjobs.testing.payloads``;
- limited handlers: 100 jobs of a handler with ``concurrency=`` or ``rate=``, through a
  worker at concurrency 10: a limit with room to spare, a saturated one (starts deferred
  and claimed again) and a rate. Slot items have no list-index entry (1 WRU a write),
  and a refused take is a refused conditional write; the table counts them as writes;
- chain of 3: three jobs, each enqueued ``after`` the one before it; fan-in of 100: a
  hundred jobs and one ``after`` all of them (``enqueue(after=...)``); a batch of 1,000
  jobs with an ``on_complete`` callback (``queue.batch``);
- FIFO, one group: 20 jobs of one tenant on a FIFO queue, a worker at concurrency 4 (they
  run one at a time; every message received beside an earlier one of its group is handed
  back); FIFO, 10 groups: 100 jobs of ten tenants, the same worker;
- delay past 15 minutes: derived, not run (a real 15-minute SQS delay is too long for a
  benchmark): the happy path plus one receive, one refused claim write and one
  ``ChangeMessageVisibility`` per 12-hour hop (see docs/explanation/aws-store.md and the hop tests).

``--history`` measures the operator's reads instead: 10 open jobs beside 100, 1,000 and
10,000 kept ones (ended over the day before, mostly completed, some cancelled and dead,
four tenants: ``sqsjobs.aws.wire.history``), in record formats 2 (ended jobs stay in
the open partitions) and 3 (they move out), and the read units of ``stats()``, one
reconciler pass, ``list(status="queued", limit=10)``, ``for_tenant("acme").list(limit=10)``
and one refresh of the dashboard's overview.

Prices (us-east-1, on-demand, list): DynamoDB $0.625 per million write request units and
$0.125 per million read request units (since the November 2024 reduction); SQS standard
$0.40 per million requests. Write and read units are measured, not assumed: the
emulator's billing meter (``sqsjobs.testing.meter``) prices every DynamoDB request from
the items' before and after images, list-index writes included.

    python bench/request_costs.py [--history]
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from sqsjobs import (
    Backoff,
    EnqueueRequest,
    JobContext,
    JobQueue,
    JobRegistry,
    JobStatus,
    JobWorker,
)
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.history import history_items, keep_history
from sqsjobs.testing import RequestCounter, RequestCounts, local_aws
from sqsjobs.testing.billing import dollars_per_million_jobs
from sqsjobs.testing.meter import BillingMeter, Read, Write, totals
from sqsjobs.testing.payloads import order_document, random_document

Scenario = Callable[[JobQueue, RequestCounter], Awaitable[tuple[RequestCounts, int]]]


async def drain(
    queue: JobQueue,
    handler: Callable[..., object],
    jobs: int,
    concurrency: int,
    registry: JobRegistry | None = None,
) -> None:
    done = asyncio.Event()
    finished = 0

    def completed(_: object) -> None:
        nonlocal finished
        finished += 1
        if finished == jobs:
            done.set()

    handlers = registry if registry is not None else {"bench": handler}
    worker = JobWorker(queue, handlers, concurrency=concurrency, on_complete=completed)
    async with worker:
        await done.wait()


async def alone(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
    before = counter.counts()
    await queue.enqueue("bench", {"n": 1})
    await drain(queue, lambda ctx: None, 1, 1)
    return counter.counts() - before, 1


async def busy(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
    before = counter.counts()
    await queue.enqueue_many([EnqueueRequest("bench", {"n": n}) for n in range(100)])
    await drain(queue, lambda ctx: None, 100, 10)
    return counter.counts() - before, 100


async def urgent(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
    """Busy, one job in ten urgent: each sends a second copy, to the priority lane."""
    before = counter.counts()
    jobs = [EnqueueRequest("bench", {"n": n}, priority=5 if n % 10 == 0 else 0) for n in range(100)]
    await queue.enqueue_many(jobs)
    await drain(queue, lambda ctx: None, 100, 10)
    return counter.counts() - before, 100


async def retry(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
    failed: set[str] = set()

    async def once(ctx: JobContext) -> None:
        if ctx.job.id not in failed:
            failed.add(ctx.job.id)
            raise ConnectionError("first attempt fails")

    before = counter.counts()
    await queue.enqueue("bench", {"n": 1})
    await drain(queue, once, 1, 1)
    return counter.counts() - before, 1


async def duplicate(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
    await queue.enqueue("bench", {"n": 1}, idempotency_key="order-1")
    before = counter.counts()
    await queue.enqueue("bench", {"n": 1}, idempotency_key="order-1")
    return counter.counts() - before, 1


def sized(kilobytes: int, make: Callable[[int], Any]) -> Scenario:
    """The happy path alone, with a payload of exactly this many KB of compact JSON."""

    async def scenario(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
        before = counter.counts()
        await queue.enqueue("bench", make(kilobytes * 1024))
        await drain(queue, lambda ctx: None, 1, 1)
        return counter.counts() - before, 1

    return scenario


def limited(jobs: int, at_once: int, **limits: Any) -> Scenario:
    """``jobs`` no-op jobs of a handler with ``limits``, through one worker."""

    async def scenario(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
        registry = JobRegistry()
        registry.add("bench", lambda ctx: None, **limits)
        before = counter.counts()
        await queue.enqueue_many([EnqueueRequest("bench", {"n": n}) for n in range(jobs)])
        await drain(queue, lambda ctx: None, jobs, at_once, registry)
        return counter.counts() - before, jobs

    return scenario


async def fifo_one_group(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
    before = counter.counts()
    await queue.enqueue_many([EnqueueRequest("bench", {"n": n}, tenant="acme") for n in range(20)])
    await drain(queue, lambda ctx: None, 20, 4)
    return counter.counts() - before, 20


async def fifo_groups(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
    before = counter.counts()
    requests = [EnqueueRequest("bench", {"n": n}, tenant=f"t{n % 10}") for n in range(100)]
    await queue.enqueue_many(requests)
    await drain(queue, lambda ctx: None, 100, 4)
    return counter.counts() - before, 100


async def chain(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
    """Three jobs, each after the one before (``enqueue(after=...)``), each handed its
    parent's result."""

    def step(ctx: JobContext) -> int:
        return sum(int(str(v)) for v in ctx.parent_results.values()) + 1

    before = counter.counts()
    first = (await queue.enqueue("bench", {"n": 1})).job
    second = (await queue.enqueue("bench", {"n": 2}, after=[first.id])).job
    await queue.enqueue("bench", {"n": 3}, after=[second.id])
    await drain(queue, step, 3, 1)
    return counter.counts() - before, 3


async def fan_in(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
    """A hundred parents and one job after all of them."""
    before = counter.counts()
    parents = await queue.enqueue_many([EnqueueRequest("bench", {"n": n}) for n in range(100)])
    await queue.enqueue("bench", {"merge": True}, after=[p.job.id for p in parents])
    await drain(queue, lambda ctx: None, 101, 10)
    return counter.counts() - before, 101


async def batch_of(queue: JobQueue, counter: RequestCounter) -> tuple[RequestCounts, int]:
    """A thousand jobs in one batch, and an ``on_complete`` callback after them."""
    before = counter.counts()
    await queue.batch(
        [EnqueueRequest("bench", {"n": n}) for n in range(1000)],
        on_complete=EnqueueRequest("bench", {"summary": True}),
    )
    await drain(queue, lambda ctx: None, 1001, 10)
    return counter.counts() - before, 1001


SCENARIOS: dict[str, Scenario] = {
    "happy path, alone": alone,
    "happy path, busy (100 jobs)": busy,
    "busy, 10 of 100 jobs urgent (priority lane)": urgent,
    "one retry": retry,
    "idempotent duplicate": duplicate,
    **{f"payload {kb} KB of order JSON, alone": sized(kb, order_document) for kb in (1, 10, 100)},
    **{f"payload {kb} KB of base64, alone": sized(kb, random_document) for kb in (1, 10, 100)},
    "concurrency limit 20, never full (100 jobs, 10 at once)": limited(100, 10, concurrency=20),
    "concurrency limit 2, saturated (100 jobs, 10 at once)": limited(100, 10, concurrency=2),
    "rate limit 20 per second (100 jobs, 10 at once)": limited(100, 10, rate=(20, 1.0)),
    "FIFO, one group (20 jobs, concurrency 4)": fifo_one_group,
    "FIFO, 10 groups (100 jobs, concurrency 4)": fifo_groups,
    "chain of 3 (each after the one before)": chain,
    "fan-in of 100 (101 jobs: one after a hundred)": fan_in,
    "batch of 1,000 with an on_complete callback (1,001 jobs)": batch_of,
}
FIFO = {name for name in SCENARIOS if name.startswith("FIFO")}


class MeteredCounter(RequestCounter):
    """Counts requests and notes where the meter's records stood at each ``counts()``, so
    a scenario's bill starts where its request count does (at its first ``counts()``)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[Write | Read] = []
        self.marks: list[int] = []

    def counts(self) -> RequestCounts:
        self.marks.append(len(self.records))
        return super().counts()


Row = tuple[str, float, float, float, float, float]  # name, writes, WRU, reads, RRU, SQS


async def run(endpoint: str, counter: MeteredCounter, meter: BillingMeter) -> list[Row]:
    rows = []
    for name, scenario in SCENARIOS.items():
        fifo = name in FIFO  # moto's long poll misses a group unlocking: poll for 1 s
        store = SqsJobStore.create(
            f"cost-{uuid.uuid4().hex[:8]}",
            endpoint_url=endpoint,
            fifo=fifo,
            wait_time=1.0 if fifo else 20.0,
        )
        queue = JobQueue(store, backoff=Backoff(base=0.1, max=0.1), payload_max_bytes=200 * 1024)
        with meter.record() as records:
            counter.records, counter.marks = records, []
            counts, jobs = await scenario(queue, counter)
            before = counter.counts()
            await store.aclose()  # batched deletes still pending belong to the scenario
        counts = counts + (counter.counts() - before)
        mine = [
            record for record in records[counter.marks[0] :] if record.table == store.table_name
        ]
        wru, rru = totals(mine)
        writes, reads = counts.dynamodb_writes / jobs, counts.dynamodb_reads / jobs
        rows.append((name, writes, wru / jobs, reads, rru / jobs, counts.service("sqs") / jobs))
        print(f"\n{name}: requests per job")
        for (service, action), count in sorted(counts.requests.items()):
            print(f"  {service:<9} {action:<28} {count / jobs:7.3f}")
    return rows


def emulator_credentials() -> None:
    """Dummy credentials and a region for the local emulator, unless the shell set its own."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        os.environ.setdefault(name, value)


KEPT = (100, 1_000, 10_000)
OPEN_JOBS = 10


async def history_costs(endpoint: str, meter: BillingMeter) -> dict[tuple[int, int], list[float]]:
    """Per (record format, kept jobs): the read units of each of ``READS``."""
    import boto3

    dynamodb = boto3.client("dynamodb", endpoint_url=endpoint)
    found: dict[tuple[int, int], list[float]] = {}
    for record_format in (2, 3):
        for kept in KEPT:
            store = SqsJobStore.create(
                f"hist-{uuid.uuid4().hex[:8]}", endpoint_url=endpoint, record_format=record_format
            )
            items = history_items(
                "default", kept, ended_before=time.time() - 3_700, record_format=record_format
            )
            keep_history(dynamodb, store.table_name, items)
            queue = JobQueue(store)
            for n in range(OPEN_JOBS):
                tenant = ("acme", "globex", "initech", None)[n % 4]
                await queue.enqueue("invoice.send", {"n": n, "note": "Grüße"}, tenant=tenant)
            await store.stats()  # learns the queues' DLQs and the table's indexes
            units = []
            for read in READS.values():
                with meter.record() as records:
                    await read(store)
                mine = [r for r in records if r.table == store.table_name]
                units.append(totals(mine)[1])
            found[(record_format, kept)] = units
            print(f"format {record_format}, {kept} kept: {units}")
            await store.aclose()
    dynamodb.close()
    return found


async def _overview(store: SqsJobStore) -> object:
    from sqsjobs.contrib.dashboard._source import JobSource

    return await JobSource(store, time.time).overview()


READS: dict[str, Callable[[SqsJobStore], Awaitable[object]]] = {
    "`stats()`": lambda store: store.stats(),
    "reconciler pass": lambda store: store.reconcile(grace=60.0),
    '`list(status="queued", limit=10)`': lambda store: JobQueue(store).list(
        status=JobStatus.QUEUED, limit=10
    ),
    '`for_tenant("acme").list(limit=10)`': lambda store: (
        JobQueue(store).for_tenant("acme").list(limit=10)
    ),
    "dashboard overview refresh": _overview,
}


def history_main() -> None:
    meter = BillingMeter()
    with local_aws(meter=meter) as endpoint:
        found = asyncio.run(history_costs(endpoint, meter))
    for record_format in (2, 3):
        print(f"\nRecord format {record_format}: RRU per call, 10 open jobs beside N kept\n")
        kept = " | ".join(f"{n:,} kept" for n in KEPT)
        print(f"| read | {kept} | {KEPT[-1]:,} / {KEPT[0]:,} |")
        print("|" + " --- |" * (len(KEPT) + 2))
        for i, name in enumerate(READS):
            units = [found[(record_format, n)][i] for n in KEPT]
            cells = " | ".join(f"{u:.1f}" for u in units)
            print(f"| {name} | {cells} | {units[-1] / units[0]:.2f}x |")


def main() -> None:
    if "--history" in sys.argv[1:]:
        emulator_credentials()
        logging.getLogger("sqsjobs").setLevel(logging.ERROR)
        history_main()
        return
    emulator_credentials()
    logging.getLogger("sqsjobs").setLevel(logging.ERROR)  # the retry scenario's warning
    counter, meter = MeteredCounter(), BillingMeter()
    with local_aws(counter=counter, meter=meter) as endpoint:
        rows = asyncio.run(run(endpoint, counter, meter))
    name, writes, wru, reads, rru, sqs = rows[1]
    # One refused claim write of the small item (1 WRU, no index write), one more batched
    # receive (0.11/job when busy) and one batched hide (0.1/job) per hop.
    rows.append(
        ("delay past 15 min, one hop (derived, busy)", writes + 1, wru + 1, reads, rru, sqs + 0.21)
    )
    header = ["scenario", "DynamoDB write requests", "WRU", "read requests", "RRU", "SQS requests"]
    print("\n| " + " | ".join([*header, "$ per million jobs"]) + " |")
    print("|" + " --- |" * (len(header) + 1))
    for name, writes, wru, reads, rru, sqs in rows:
        print(
            f"| {name} | {writes:.2f} | {wru:.2f} | {reads:.2f} | {rru:.2f} | {sqs:.2f} | "
            f"{dollars_per_million_jobs(wru, rru, sqs):.2f} |"
        )


if __name__ == "__main__":
    main()
