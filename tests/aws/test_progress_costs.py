"""Progress costs no request on SQS: it rides in the heartbeat's and the outcome's
``UpdateItem`` (``core.progress``), whatever how often a handler reports it."""

from __future__ import annotations

from typing import Any

from sqsjobs import JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing import RequestCounts

from .emulator import COUNTER


async def run_one(store: SqsJobStore, reports: int) -> tuple[RequestCounts, Any]:
    queue = JobQueue(store)

    async def convert(ctx: JobContext) -> str:
        for n in range(reports):
            await ctx.progress({"pages": n + 1, "of": reports})
            if n == reports // 2:
                assert await ctx.heartbeat()
        if not reports:
            assert await ctx.heartbeat()
        return "converted"

    job = (await queue.enqueue("pdf.convert", {"file": "scan-0042.pdf"})).job
    before = COUNTER.counts()
    assert await JobWorker(queue, {"pdf.convert": convert}).run_once()
    await store.aclose()  # the batched delete goes now, for both runs alike
    spent = COUNTER.counts() - before
    return spent, await queue.get(job.id)


async def test_a_hundred_reports_cost_what_none_cost(
    aws_endpoint: str, prefix: str, dynamodb: Any
) -> None:
    quiet_store = SqsJobStore.create(f"{prefix}-q", priority_bands=(), endpoint_url=aws_endpoint)
    busy_store = SqsJobStore.create(f"{prefix}-b", priority_bands=(), endpoint_url=aws_endpoint)
    quiet, _ = await run_one(quiet_store, 0)
    busy, done = await run_one(busy_store, 100)
    assert dict(busy.requests) == dict(quiet.requests)
    assert busy.dynamodb_writes == quiet.dynamodb_writes
    assert (done.status, done.progress) == (JobStatus.COMPLETED, {"pages": 100, "of": 100})
    item = dynamodb.get_item(TableName=busy_store.table_name, Key={"pk": {"S": f"job#{done.id}"}})[
        "Item"
    ]
    assert item["progress"] == {"S": '{"pages":100,"of":100}'}  # compact JSON text
