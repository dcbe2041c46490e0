"""Real processes: a worker killed mid-job, and the blocking producer's import footprint."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqsjobs import JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore

HERE = Path(__file__).parent


async def test_a_worker_killed_mid_job_loses_nothing(
    store: SqsJobStore, aws_endpoint: str, tmp_path: Path
) -> None:
    queue = JobQueue(store)
    enqueued = (await queue.enqueue("hang", {"n": 1}, lease=1, max_attempts=3)).job
    marker = tmp_path / "started"
    endpoint = aws_endpoint
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HERE / "worker_process.py"),
        endpoint,
        store.table_name,
        store.queue_urls["default"],
        str(marker),
    )
    try:
        deadline = time.monotonic() + 30
        while not await asyncio.to_thread(marker.exists):
            assert process.returncode is None, "the worker process died on its own"
            assert time.monotonic() < deadline, "the worker process never started the job"
            await asyncio.sleep(0.1)
        running = await queue.get(enqueued.id)
        assert running is not None
        assert (running.status, running.attempts, running.locked_by) == (
            JobStatus.RUNNING,
            1,
            "doomed",
        )
    finally:
        os.kill(process.pid, signal.SIGKILL)
        assert await process.wait() == -signal.SIGKILL
    worker = JobWorker(queue, {"hang": lambda ctx: "survived"}, worker_id="heir")
    deadline = time.monotonic() + 10
    while not await worker.run_once():  # the lease and the message come back within ~1 s
        assert time.monotonic() < deadline
        await asyncio.sleep(0.2)
    done = await queue.get(enqueued.id)
    assert done is not None
    assert (done.status, done.attempts, done.result, done.locked_by) == (
        JobStatus.COMPLETED,
        2,
        "survived",
        None,
    )


SYNC_PRODUCER = """
import json, sys, time
from sqsjobs import EnqueueRequest, SyncJobQueue
from sqsjobs.aws import SqsJobStore

endpoint, table, urls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
with SqsJobStore(table_name=table, queue_urls=urls, endpoint_url=endpoint) as store:
    queue = SyncJobQueue(store)
    one = queue.enqueue("mail.send", {"to": "a@example.com"}, idempotency_key="k1")
    again = queue.enqueue("mail.send", {"to": "a@example.com"}, idempotency_key="k1")
    many = queue.enqueue_many([EnqueueRequest("mail.send", i, queue="other") for i in range(3)])
    listed = [job.id for job in queue.list(limit=10).jobs]
    cancelled = queue.cancel(many[0].job.id)
    got = queue.get(one.job.id)
    report = store.sync.reconcile(grace=3600)
loaded = sorted(m for m in ("aioboto3", "aiobotocore", "aiohttp") if m in sys.modules)
print(json.dumps({
    "duplicate": again.duplicate, "same": again.job.id == one.job.id, "listed": len(listed),
    "cancelled": cancelled, "status": got.status.value, "resent": report.resent,
    "loaded": loaded,
}))
"""


def test_the_blocking_producer_never_loads_asyncio_clients(
    store: SqsJobStore, aws_endpoint: str
) -> None:
    endpoint = aws_endpoint
    urls = json.dumps(dict(store.queue_urls))
    done = subprocess.run(
        [sys.executable, "-c", SYNC_PRODUCER, endpoint, store.table_name, urls],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "duplicate": True,
        "same": True,
        "listed": 4,
        "cancelled": True,
        "status": "queued",
        "resent": 0,
        "loaded": [],
    }
