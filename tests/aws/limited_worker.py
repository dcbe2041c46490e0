"""A worker process with limited handlers, for the fleet-wide limit tests.

Usage: python limited_worker.py ENDPOINT TABLE QUEUE_URL OUT_DIR WORKER_ID

One run at a time per process, so three processes could run three at once unless the
limit stops them. Each handler appends ``start end worker_id`` (epoch seconds) to
``OUT_DIR/{name}`` when its run ends (for ``limited.rate``: its claim and its start),
so the test can compute the runs' overlap across processes.
``limited.once`` writes ``OUT_DIR/holding`` and then hangs (heartbeating) the first time
it runs in any process, so the test knows when to SIGKILL the holder of its slot.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from sqsjobs import JobContext, JobQueue, JobRegistry, JobWorker
from sqsjobs.aws import SqsJobStore


def registry(out: Path, worker_id: str) -> JobRegistry:
    handlers = JobRegistry()

    def record(name: str, start: float) -> None:
        with (out / name).open("a") as spans:
            spans.write(f"{start} {time.time()} {worker_id}\n")

    @handlers.handler("limited.concurrent", concurrency=2)
    async def concurrent(ctx: JobContext) -> None:
        start = time.time()
        await asyncio.sleep(0.3)
        await asyncio.to_thread(record, "limited.concurrent", start)

    @handlers.handler("limited.rate", rate=(5, 1.0))
    async def rated(ctx: JobContext) -> None:
        # The run takes its rate slot after its claim and before this line: the claim's
        # instant and this one bound when it took the slot (``start end`` below).
        claimed = ctx.job.updated_at.timestamp()
        await asyncio.to_thread(record, "limited.rate", claimed)

    @handlers.handler("limited.once", concurrency=1)
    async def once(ctx: JobContext) -> str:
        holding = out / "holding"
        if not holding.exists():
            await asyncio.to_thread(holding.write_text, ctx.job.id)
            await asyncio.sleep(3600)
        return worker_id

    return handlers


async def serve(endpoint: str, table: str, url: str, out: str, worker_id: str) -> None:
    store = SqsJobStore(
        table_name=table, queue_urls={"default": url}, endpoint_url=endpoint, wait_time=1.0
    )
    async with store:
        worker = JobWorker(
            JobQueue(store), registry(Path(out), worker_id), concurrency=1, worker_id=worker_id
        )
        await worker.run(grace=1.0)


if __name__ == "__main__":
    asyncio.run(serve(*sys.argv[1:6]))
