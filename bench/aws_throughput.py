"""SqsJobStore throughput and AWS requests per job, on the local AWS emulator.

N jobs go through in rounds: each round enqueues ``--round`` jobs with ``enqueue_many``
(batches of 100), then one ``JobWorker`` (a no-op handler) drains them. It prints jobs/s
for enqueueing and for draining, and the requests per job by service and action as the
emulator counted them.

The emulator (moto) runs in this process and is the bottleneck: read the rates as
relative figures, for spotting regressions, and the request counts as exact ones (they
are what AWS would bill). Rounds keep the queue short because moto's SQS slows with
queue depth (a receive from 1,700 messages takes seconds), which would measure moto
rather than sqsjobs.

    python bench/aws_throughput.py [--jobs 2000] [--round 200] [--concurrency 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid
from dataclasses import dataclass

from sqsjobs import EnqueueRequest, Job, JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing import RequestCounter, RequestCounts, local_aws

BATCH = 100
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@dataclass(frozen=True)
class Phase:
    name: str
    seconds: float
    counts: RequestCounts


async def enqueue(queue: JobQueue, jobs: int) -> None:
    for start in range(0, jobs, BATCH):
        size = min(BATCH, jobs - start)
        await queue.enqueue_many(
            [EnqueueRequest("bench.noop", {"n": start + i}) for i in range(size)]
        )


class Drain:
    """A worker that runs for the whole benchmark and counts what it completed."""

    def __init__(self, queue: JobQueue, concurrency: int) -> None:
        self.completed = 0
        self._target = 0
        self._reached = asyncio.Event()
        self.worker = JobWorker(
            queue,
            {"bench.noop": self._noop},
            concurrency=concurrency,
            on_complete=self._on_complete,
        )

    @staticmethod
    async def _noop(ctx: JobContext) -> None:
        return None

    def _on_complete(self, job: Job) -> None:
        self.completed += 1
        if self.completed >= self._target:
            self._reached.set()

    async def until(self, target: int) -> None:
        self._target = target
        self._reached.clear()
        if self.completed < target:
            await self._reached.wait()


async def measure(
    endpoint: str, counter: RequestCounter, jobs: int, size: int, concurrency: int
) -> list[Phase]:
    store = SqsJobStore.create(f"bench-{uuid.uuid4().hex[:8]}", endpoint_url=endpoint)
    queue = JobQueue(store)
    drain = Drain(queue, concurrency)
    seconds = {"enqueue": 0.0, "drain": 0.0}
    counts = {"enqueue": RequestCounts.none(), "drain": RequestCounts.none()}
    drain.worker.start()
    for start in range(0, jobs, size):
        target = min(jobs, start + size)
        for name, work in (
            ("enqueue", enqueue(queue, target - start)),
            ("drain", drain.until(target)),
        ):
            before, started = counter.counts(), time.perf_counter()
            await work
            seconds[name] += time.perf_counter() - started
            counts[name] = counts[name] + (counter.counts() - before)
    before = counter.counts()
    await drain.worker.stop()
    await store.aclose()  # the last batched deletes belong to the drain
    counts["drain"] = counts["drain"] + (counter.counts() - before)
    return [Phase(name, seconds[name], counts[name]) for name in ("enqueue", "drain")]


def report(phases: list[Phase], jobs: int) -> None:
    for phase in phases:
        print(f"{phase.name:>8}: {jobs / phase.seconds:8.1f} jobs/s  ({phase.seconds:.2f} s)")
    total = phases[0].counts + phases[1].counts
    print(f"\nrequests per job ({jobs} jobs)")
    for (service, action), count in sorted(total.requests.items()):
        print(f"  {service:<9} {action:<28} {count / jobs:7.3f}")
    print(f"  {'dynamodb':<9} {'item writes':<28} {total.dynamodb_writes / jobs:7.3f}")
    print(f"  {'dynamodb':<9} {'reads':<28} {total.dynamodb_reads / jobs:7.3f}")
    print(f"  {'sqs':<9} {'all':<28} {total.service('sqs') / jobs:7.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--round", type=int, default=200, help="jobs per enqueue/drain round")
    parser.add_argument("--concurrency", type=int, default=10)
    options = parser.parse_args()
    for name, value in CREDENTIALS.items():
        os.environ.setdefault(name, value)
    counter = RequestCounter()
    with local_aws(counter=counter) as endpoint:
        phases = asyncio.run(
            measure(endpoint, counter, options.jobs, options.round, options.concurrency)
        )
    report(phases, options.jobs)


if __name__ == "__main__":
    main()
