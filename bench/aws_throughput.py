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

Then the worker's own cost: ``--cpu-jobs`` jobs are enqueued and a worker in a
subprocess (so the emulator's CPU, in this process, is not counted) drains them and
reports its process CPU time (``time.process_time()``) per job. Then the emulator's own
write ceiling in the same run: a subprocess sends the very writes a worker sends for a
job, its claim and its completion (``wire.dynamo.claim`` and ``wire.transitions.complete``
on records enqueued for it), through the same transport, from 1, 2 and as many concurrent clients
as the worker's concurrency; the best rate is the ceiling, and the drain's DynamoDB
write rate a share of it. The emulator's CPU per write (this process's CPU over the
writes served) is reported for both: it bounds either rate whatever else the machine
runs.

    python bench/aws_throughput.py [--jobs 2000] [--round 200] [--concurrency 10]
                                   [--cpu-jobs 200] [--baseline-src DIR] [--turns N]
                                   [--closing]

The worker's cost is measured on both transports of this tree, in turns: the SDK's own
pipeline (the default) and the lean path (``lean=True``), with their medians side by
side. ``--baseline-src`` runs another tree's worker (its ``src`` directory first on
``PYTHONPATH``) in turns with this one's on the same emulator, for before/after
figures from one run. "after start" counts the worker's CPU from its first completed
job, leaving out its start-up (importing aiobotocore, opening clients: about 0.2 s of
CPU, a millisecond per job over 200 jobs). The emulator keeps connections open, as AWS
does; ``--closing`` measures the workers once more through a front that closes each
after its reply (``closing_front.py``), as werkzeug's server does, so that each request
costs a TCP connection of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from closing_front import front
from sqsjobs import EnqueueRequest, Job, JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.transports.aio import AioTransport
from sqsjobs.aws.transports.endpoint import Endpoint
from sqsjobs.aws.wire import dynamo, transitions
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
    await enqueue_ids(queue, jobs)


async def enqueue_ids(queue: JobQueue, jobs: int) -> list[str]:
    """Enqueue ``jobs`` no-op jobs in batches; their ids."""
    ids = []
    for start in range(0, jobs, BATCH):
        size = min(BATCH, jobs - start)
        results = await queue.enqueue_many(
            [EnqueueRequest("bench.noop", {"n": start + i}) for i in range(size)]
        )
        ids += [result.job.id for result in results]
    return ids


class Drain:
    """A worker that runs for the whole benchmark and counts what it completed."""

    def __init__(self, queue: JobQueue, concurrency: int) -> None:
        self.completed = 0
        self.first_at = 0.0  # perf_counter() at the first completion
        self.first_cpu = 0.0  # process_time() at the first completion
        self.first_system = 0.0  # the system part of it (getrusage)
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
        if self.completed == 1:
            self.first_at, self.first_cpu = time.perf_counter(), time.process_time()
            self.first_system = resource.getrusage(resource.RUSAGE_SELF).ru_stime
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


async def serve(endpoint: str, prefix: str, jobs: int, concurrency: int) -> dict[str, float]:
    """The worker subprocess: drain ``jobs`` jobs; its CPU seconds and wall seconds."""
    store = SqsJobStore.create(prefix, endpoint_url=endpoint)
    drain = Drain(JobQueue(store), concurrency)
    cpu, started = time.process_time(), time.perf_counter()
    drain.worker.start()
    await drain.until(jobs)
    ended_cpu, ended = time.process_time(), time.perf_counter()
    ended_system = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    await drain.worker.stop()
    await store.aclose()
    return {
        "cpu": ended_cpu - cpu,
        "steady_cpu": ended_cpu - drain.first_cpu,  # without start-up: imports, clients
        "steady_system": ended_system - drain.first_system,  # the kernel's part (sockets)
        "seconds": ended - started,
        "first": drain.first_at - started,
    }


async def write_loop(endpoint: str, prefix: str, clients: int) -> dict[str, float]:
    """The ceiling subprocess: ``clients`` concurrent loops that claim and complete each
    record named on stdin, with the worker's own requests over the worker's transport."""
    ids: list[str] = json.loads(sys.stdin.read())
    store = SqsJobStore.create(prefix, endpoint_url=endpoint)
    layout = store._state.layout
    send = AioTransport(Endpoint(endpoint_url=endpoint))
    todo = list(ids)

    async def client() -> None:
        while todo:
            job_id, now = todo.pop(), time.time()
            token = uuid.uuid4().hex
            skew, retention = layout.clock_skew, layout.retention
            await send(dynamo.claim(layout.indexed, job_id, "default", "ceiling", token, now, skew))
            done = time.time()
            await send(
                transitions.complete(
                    layout.indexed, (job_id, "default"), token, done, None, done + retention
                )
            )

    try:
        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        seconds = time.perf_counter() - started
    finally:
        await send.aclose()
        store.close()
    return {"writes": 2 * len(ids), "seconds": seconds}


def child(
    mode: str,
    *args: str,
    src: str | None = None,
    stdin: str | None = None,
    lean: bool = False,
) -> dict[str, float]:
    """Run this file in a subprocess; ``src``: the sqsjobs sources it imports instead;
    ``lean``: its stores send the hot calls on the lean path (``SQSJOBS_LEAN=1``)."""
    command = [sys.executable, __file__, f"--{mode}", *args]
    environment = dict(os.environ)
    environment["SQSJOBS_LEAN"] = "1" if lean else "0"
    if src is not None:
        environment["PYTHONPATH"] = os.pathsep.join([src, environment.get("PYTHONPATH", "")])
    run = subprocess.run(
        command, check=True, capture_output=True, text=True, env=environment, input=stdin
    )
    figures: dict[str, float] = json.loads(run.stdout)
    return figures


def emulated(work: Callable[[], dict[str, float]]) -> tuple[dict[str, float], float]:
    """``work``'s figures and the emulator's CPU seconds meanwhile (this process's: the
    emulator serves from its threads while the main thread waits for a subprocess)."""
    cpu = time.process_time()
    figures = work()
    return figures, time.process_time() - cpu


def ceiling(endpoint: str, jobs: int, concurrency: int) -> dict[int, tuple[float, float]]:
    """By client count: the rate of the worker's writes and the emulator's CPU per write."""
    counts = sorted({1, 2, concurrency})
    prefix = f"ceil-{uuid.uuid4().hex[:8]}"
    store = SqsJobStore.create(prefix, endpoint_url=endpoint)
    ids = asyncio.run(enqueue_ids(JobQueue(store), jobs * len(counts)))
    runs = {}
    for n, clients in enumerate(counts):
        mine = json.dumps(ids[n * jobs : (n + 1) * jobs])
        loop, cpu = emulated(
            functools.partial(child, "ceiling", endpoint, prefix, str(clients), stdin=mine)
        )
        runs[clients] = (loop["writes"] / loop["seconds"], cpu / loop["writes"])
    return runs


def worker_cost(
    endpoint: str,
    jobs: int,
    concurrency: int,
    label: str = "",
    src: str | None = None,
    via: str | None = None,
    lean: bool = False,
    ceiling_too: bool = True,
) -> float:
    """The worker's CPU per job after start (returned, in ms) and the drain's share of the
    write ceiling; ``via``: the endpoint the worker talks to instead (a closing front),
    the ceiling left out; ``lean``: the worker on the lean path."""
    prefix = f"cpu-{uuid.uuid4().hex[:8]}"
    store = SqsJobStore.create(prefix, endpoint_url=endpoint)
    asyncio.run(enqueue(JobQueue(store), jobs))
    served = via or endpoint
    drained, drain_cpu = emulated(
        lambda: child("worker", served, prefix, str(jobs), str(concurrency), src=src, lean=lean)
    )
    rate = jobs / drained["seconds"]
    steady = 1000 * drained["steady_cpu"] / (jobs - 1)
    system = 1000 * drained["steady_system"] / (jobs - 1)
    print(f"\nworker in its own process{label}, {jobs} jobs, concurrency {concurrency}:")
    print(f"  drain          {rate:8.1f} jobs/s ({2 * rate:.1f} UpdateItem/s)")
    print(f"  first job done {drained['first']:8.2f} s after the worker started")
    print(f"  worker CPU     {1000 * drained['cpu'] / jobs:8.2f} ms per job")
    print(f"    after start  {steady:8.2f} ms per job (from the first job's completion)")
    print(f"    in the kernel{system:8.2f} ms of it (system time: sockets, polling)")
    if via is not None or not ceiling_too:
        return steady
    runs = ceiling(endpoint, jobs, concurrency)
    best = max(rate for rate, _ in runs.values())
    by_clients = " / ".join(f"{r:.1f}" for r, _ in runs.values())
    clients = "/".join(str(n) for n in runs)
    emulator = " / ".join(f"{1000 * c:.1f}" for _, c in runs.values())
    print(f"  ceiling        {best:8.1f} UpdateItem/s: best of {by_clients} ({clients} clients)")
    print(f"  drain share    {2 * rate / best:8.0%} of the emulator's write ceiling")
    print(f"  emulator CPU   {500 * drain_cpu / jobs:8.1f} ms per UpdateItem in the drain")
    print(f"                 (SQS included), {emulator} ms in the ceiling runs")
    return steady


def worker_costs(endpoint: str, options: argparse.Namespace, via: str | None = None) -> None:
    """``--turns`` turns of each tree's worker, taking turns on one emulator: this tree's
    on the SDK's pipeline (the default) and on the lean path (``lean=True``), then the
    medians side by side."""
    jobs, concurrency, baseline = options.cpu_jobs, options.concurrency, options.baseline_src
    kind = ", a connection per request" if via else ""
    steady: dict[str, list[float]] = {"default": [], "lean=True": []}
    for turn in range(options.turns):
        if baseline:
            label = f" (baseline {baseline}{kind}, turn {turn + 1})"
            worker_cost(endpoint, jobs, concurrency, label, src=baseline, via=via)
        for path, lean in (("default", False), ("lean=True", True)):
            label = f" (this tree, {path}{kind}, turn {turn + 1})"
            first = turn == 0 and not lean
            cost = worker_cost(
                endpoint, jobs, concurrency, label, via=via, lean=lean, ceiling_too=first
            )
            steady[path].append(cost)
    middle = {path: statistics.median(costs) for path, costs in steady.items()}
    print(f"\nworker CPU per job after start{kind}, median of {options.turns}:")
    for path, cost in middle.items():
        print(f"  {path:<10} {cost:6.2f} ms")
    print(f"  lean / default  {middle['lean=True'] / middle['default']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--round", type=int, default=200, help="jobs per enqueue/drain round")
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--cpu-jobs", type=int, default=200, help="jobs for the worker's CPU")
    parser.add_argument(
        "--baseline-src",
        help="another tree's src/: its worker's cost too, in turns with this one's",
    )
    parser.add_argument("--turns", type=int, default=3, help="worker-cost runs (each path)")
    parser.add_argument(
        "--closing",
        action="store_true",
        help="the worker's cost again through a front closing each connection "
        "after its reply (bench/closing_front.py)",
    )
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--ceiling", nargs=3, help=argparse.SUPPRESS)
    options = parser.parse_args()
    for name, value in CREDENTIALS.items():
        os.environ.setdefault(name, value)
    if options.worker:
        endpoint, prefix, jobs, concurrency = options.worker
        print(json.dumps(asyncio.run(serve(endpoint, prefix, int(jobs), int(concurrency)))))
        return
    if options.ceiling:
        endpoint, prefix, clients = options.ceiling
        print(json.dumps(asyncio.run(write_loop(endpoint, prefix, int(clients)))))
        return
    counter = RequestCounter()
    with local_aws(counter=counter) as endpoint:
        phases = asyncio.run(
            measure(endpoint, counter, options.jobs, options.round, options.concurrency)
        )
        report(phases, options.jobs)
        worker_costs(endpoint, options)
        if options.closing:
            with front(endpoint) as closing:
                worker_costs(endpoint, options, via=closing)


if __name__ == "__main__":
    main()
