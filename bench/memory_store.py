"""MemoryJobStore cost per job as the queue deepens: enqueue N, then claim and complete N.

All N jobs are enqueued before the first claim, so every claim runs against a deep queue.
Claims are O(log n), so the cost per job should barely grow from 1k to 100k jobs: the
ratio of the 100k figure to the 1k figure is the number to watch (target: <= 2).

    python bench/memory_store.py [--sizes 1000 10000 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass

from sqsjobs import JobQueue, MemoryJobStore


@dataclass(frozen=True)
class Run:
    size: int
    enqueue: float  # seconds for all N
    claim: float  # seconds to claim and complete all N

    def per_job(self, seconds: float) -> float:
        return seconds / self.size * 1e6

    @property
    def total(self) -> float:
        return self.enqueue + self.claim


class Clock:
    """A clock that moves a microsecond per reading, so created_at values differ."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        self.now += 1e-6
        return self.now


async def run(size: int) -> Run:
    clock = Clock()
    store = MemoryJobStore(capacity=size, clock=clock)
    queue = JobQueue(store, clock=clock)
    started = time.perf_counter()
    for i in range(size):
        await queue.enqueue("bench.job", {"n": i}, priority=i % 3)
    enqueued = time.perf_counter()
    for _ in range(size):
        [job] = await store.claim("default", "bench", clock())
        assert job.lease_token is not None
        assert await store.complete(job.id, job.lease_token, clock(), None)
    finished = time.perf_counter()
    assert await store.claim("default", "bench", clock()) == []
    return Run(size, enqueued - started, finished - enqueued)


def best(size: int, repeat: int) -> Run:
    runs = [asyncio.run(run(size)) for _ in range(repeat)]
    return min(runs, key=lambda r: r.total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()
    print(
        f"{'jobs':>8}  {'enqueue µs/job':>14}  {'claim+complete µs/job':>21}  {'total µs/job':>12}"
    )
    runs = [best(size, args.repeat) for size in args.sizes]
    for r in runs:
        print(
            f"{r.size:>8}  {r.per_job(r.enqueue):>14.1f}  {r.per_job(r.claim):>21.1f}  "
            f"{r.per_job(r.total):>12.1f}"
        )
    first, last = runs[0], runs[-1]
    print(
        f"ratio {last.size // 1000}k/{first.size // 1000}k: "
        f"total {last.per_job(last.total) / first.per_job(first.total):.2f}, "
        f"claim+complete {last.per_job(last.claim) / first.per_job(first.claim):.2f}"
    )


if __name__ == "__main__":
    main()
