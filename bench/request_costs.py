"""AWS requests per job by scenario, counted by the emulator, priced at list prices.

Request counts are deterministic, so this is a measurement of what AWS would bill, not
of the emulator's speed. Scenarios:

- happy path, alone: one job enqueued and run by itself (nothing to batch with);
- happy path, busy: 100 jobs through ``enqueue_many`` and a worker at concurrency 10;
- one retry: a job that fails once, then succeeds;
- idempotent duplicate: the second ``enqueue`` of a request with the same key;
- FIFO, one group: 20 jobs of one tenant on a FIFO queue, a worker at concurrency 4 (they
  run one at a time; every message received beside an earlier one of its group is handed
  back); FIFO, 10 groups: 100 jobs of ten tenants, the same worker;
- delay past 15 minutes: derived, not run (a real 15-minute SQS delay is too long for a
  benchmark): the happy path plus one receive, one refused claim write and one
  ``ChangeMessageVisibility`` per 12-hour hop (see docs/aws-store.md and the hop tests).

Prices (us-east-1, on-demand, list): DynamoDB $0.625 per million write request units and
$0.125 per million read request units (since the November 2024 reduction); SQS standard
$0.40 per million requests. Every item write also writes the list index (projection ALL),
so a written item of up to 1 KB costs 2 WRU; a refused conditional write costs 1 WRU.

    python bench/request_costs.py
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Awaitable, Callable

from sqsjobs import Backoff, EnqueueRequest, JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing import RequestCounter, RequestCounts, local_aws

WRU, RRU, SQS = 0.625, 0.125, 0.40  # dollars per million
INDEX_WRITES = 2  # the table item and its list-index entry

Scenario = Callable[[JobQueue, RequestCounter], Awaitable[tuple[RequestCounts, int]]]


async def drain(
    queue: JobQueue, handler: Callable[..., object], jobs: int, concurrency: int
) -> None:
    done = asyncio.Event()
    finished = 0

    def completed(_: object) -> None:
        nonlocal finished
        finished += 1
        if finished == jobs:
            done.set()

    worker = JobWorker(queue, {"bench": handler}, concurrency=concurrency, on_complete=completed)
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


SCENARIOS: dict[str, Scenario] = {
    "happy path, alone": alone,
    "happy path, busy (100 jobs)": busy,
    "one retry": retry,
    "idempotent duplicate": duplicate,
    "FIFO, one group (20 jobs, concurrency 4)": fifo_one_group,
    "FIFO, 10 groups (100 jobs, concurrency 4)": fifo_groups,
}
FIFO = {name for name in SCENARIOS if name.startswith("FIFO")}


def cost(writes: float, refused: float, reads: float, sqs: float) -> float:
    """Dollars per million jobs."""
    return (writes * INDEX_WRITES + refused) * WRU + reads * RRU + sqs * SQS


async def run(
    endpoint: str, counter: RequestCounter
) -> list[tuple[str, float, float, float, float]]:
    rows = []
    for name, scenario in SCENARIOS.items():
        fifo = name in FIFO  # moto's long poll misses a group unlocking: poll for 1 s
        store = SqsJobStore.create(
            f"cost-{uuid.uuid4().hex[:8]}",
            endpoint_url=endpoint,
            fifo=fifo,
            wait_time=1.0 if fifo else 20.0,
        )
        queue = JobQueue(store, backoff=Backoff(base=0.1, max=0.1))
        counts, jobs = await scenario(queue, counter)
        before = counter.counts()
        await store.aclose()  # batched deletes still pending belong to the scenario
        counts = counts + (counter.counts() - before)
        refused = 1.0 if name == "idempotent duplicate" else 0.0
        writes = counts.dynamodb_writes / jobs - refused
        rows.append(
            (name, writes, refused, counts.dynamodb_reads / jobs, counts.service("sqs") / jobs)
        )
        print(f"\n{name}: requests per job")
        for (service, action), count in sorted(counts.requests.items()):
            print(f"  {service:<9} {action:<28} {count / jobs:7.3f}")
    return rows


def main() -> None:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "b",
        "AWS_SECRET_ACCESS_KEY": "b",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        os.environ.setdefault(name, value)
    logging.getLogger("sqsjobs").setLevel(logging.ERROR)  # the retry scenario's warning
    counter = RequestCounter()
    with local_aws(counter=counter) as endpoint:
        rows = asyncio.run(run(endpoint, counter))
    busy_row = rows[1]
    # One more batched receive (0.11/job when busy) and one batched hide (0.1/job) per hop.
    hop = ("delay past 15 min, one hop (derived, busy)", busy_row[1], 1.0, busy_row[3])
    rows.append((*hop, busy_row[4] + 0.21))
    header = ["scenario", "DynamoDB item writes", "refused writes", "reads", "SQS requests"]
    print("\n| " + " | ".join([*header, "$ per million jobs"]) + " |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, writes, refused, reads, sqs in rows:
        print(
            f"| {name} | {writes:.2f} | {refused:.2f} | {reads:.2f} | {sqs:.2f} | "
            f"{cost(writes, refused, reads, sqs):.2f} |"
        )


if __name__ == "__main__":
    main()
