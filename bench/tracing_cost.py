"""What tracing costs when it is off: the no-op path beside a memory-store enqueue.

OpenTelemetry imported, no tracer provider set (so nothing is traced): each enqueue and
run passes through ``enqueue_span`` and ``RunSpan``. Both are timed in one run, against
an enqueue on the memory store timed alike, and reported as a ratio, so a loaded
machine slows both sides.

    python bench/tracing_cost.py [--rounds 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from opentelemetry import trace  # noqa: F401  (imported, no provider: tracing is off)

from sqsjobs import JobQueue, MemoryJobStore
from sqsjobs.observe.tracing import RunSpan, enqueue_span


async def per_enqueue(queue: JobQueue, rounds: int) -> float:
    started = time.perf_counter()
    for n in range(rounds):
        await queue.enqueue("welcome", {"name": "Ola", "n": n})
    return (time.perf_counter() - started) / rounds


def per_traced_job(job: object, rounds: int) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        with enqueue_span([job]) as [traced]:  # type: ignore[list-item]
            RunSpan.start(traced, "worker-1").end("completed", None)
    return (time.perf_counter() - started) / rounds


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    queue = JobQueue(MemoryJobStore(capacity=args.rounds * args.repeat + 1))
    job = (await queue.enqueue("welcome", {"name": "Ola"})).job
    enqueues, spans = [], []
    for _ in range(args.repeat):
        enqueues.append(await per_enqueue(queue, args.rounds))
        spans.append(per_traced_job(job, args.rounds))
    enqueue, span = statistics.median(enqueues), statistics.median(spans)
    print(f"memory-store enqueue:   {enqueue * 1e6:7.2f} us (median of {args.repeat})")
    print(f"tracing off, per job:   {span * 1e6:7.2f} us (enqueue span + run span)")
    print(f"ratio:                  {span / enqueue:7.3f}")


if __name__ == "__main__":
    asyncio.run(main())
