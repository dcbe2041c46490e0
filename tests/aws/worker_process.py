"""A worker process for the SIGKILL test: serves one queue until it is killed.

Usage: python worker_process.py ENDPOINT TABLE QUEUE_URL MARKER_FILE

Its ``hang`` handler writes the job id to MARKER_FILE, then waits forever (heartbeating
the lease, as a long job does), so the test knows when to kill it mid-job.
"""

from __future__ import annotations

import asyncio
import pathlib
import sys

from sqsjobs import JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore


async def serve(endpoint: str, table: str, url: str, marker: str) -> None:
    store = SqsJobStore(table_name=table, queue_urls={"default": url}, endpoint_url=endpoint)

    async def hang(ctx: JobContext) -> None:
        await asyncio.to_thread(pathlib.Path(marker).write_text, ctx.job.id)
        await asyncio.sleep(3600)

    async with store:
        await JobWorker(JobQueue(store), {"hang": hang}, worker_id="doomed").run()


if __name__ == "__main__":
    asyncio.run(serve(*sys.argv[1:5]))
