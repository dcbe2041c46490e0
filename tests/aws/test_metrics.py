"""Run metrics from a worker over SqsJobStore on the emulator: EMF counts and claim refusals."""

from __future__ import annotations

import asyncio
import io
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from sqsjobs import (
    Backoff,
    EmfMetrics,
    EnqueueRequest,
    JobContext,
    JobFatalError,
    JobQueue,
    JobStatus,
    JobWorker,
)
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.sqs import body

from ..support.emf import documents, totals
from .conftest import depth

UNREGISTERED = "(unregistered)"


async def eventually(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


async def test_a_worker_on_sqs_writes_emf_counts_for_each_outcome(
    store: SqsJobStore, sqs: Any
) -> None:
    queue = JobQueue(store, backoff=Backoff(base=0.3, max=0.3, random=lambda: 1.0))
    began = time.time()
    emails = [
        (await queue.enqueue("email.send", {"to": to}, tenant="acme")).job
        for to in ("zoë@example.com", "jörg@example.de")
    ]
    charge = (await queue.enqueue("charge", {"cents": 4250}, queue="other")).job
    report = (await queue.enqueue("report.build", {"q": "Q3 Ümsatz"}, max_attempts=2)).job

    async def build(ctx: JobContext) -> None:
        raise ConnectionError(f"warehouse unreachable (attempt {ctx.attempt})")

    def decline(payload: dict[str, int]) -> None:
        raise JobFatalError(f"card declined for {payload['cents']} cents")

    out = io.StringIO()
    worker = JobWorker(
        queue,
        {"email.send": lambda payload: "ok", "charge": decline, "report.build": build},
        queues=["default", "other"],
        concurrency=4,
        metrics=EmfMetrics(stream=out),
    )
    worker.start()
    try:

        async def settled() -> bool:
            jobs = [await queue.get(job.id) for job in [*emails, charge, report]]
            return all(j is not None and j.status.value in ("completed", "dead") for j in jobs)

        await eventually(settled, "every job to end")
        # A stray copy of a completed job's message: its claim write is refused.
        sqs.send_message(
            QueueUrl=store.queue_urls["default"], MessageBody=body(emails[0].id, "default")
        )

        async def refused() -> bool:
            return "ClaimRefused" in out.getvalue()

        await eventually(refused, "the stray message's claim refusal")
    finally:
        await worker.stop()
    assert depth(sqs, store.queue_urls["default"]) == 0
    dead = await queue.get(report.id)
    assert dead is not None and (dead.status, dead.attempts) == (JobStatus.DEAD, 2)
    summed = totals(documents(out.getvalue()))
    counted = {key: value for key, value in summed.items() if key[2] != "RunDuration"}
    counted = {key: value for key, value in counted.items() if key[2] != "QueueWait"}
    assert counted == {
        ("default", "email.send", "JobsStarted"): 2,
        ("default", "email.send", "JobsCompleted"): 2,
        ("other", "charge", "JobsStarted"): 1,
        ("other", "charge", "JobsDead"): 1,
        ("default", "report.build", "JobsStarted"): 2,
        ("default", "report.build", "JobsRetried"): 1,
        ("default", "report.build", "JobsDead"): 1,
        ("default", "", "ClaimRefused"): 1,
    }
    # Real time: each start came after its job was due, and within the test's span.
    waits = [d["QueueWait"] for d in documents(out.getvalue()) if "QueueWait" in d]
    assert len(waits) == 5 and all(0 <= wait <= time.time() - began for wait in waits)


async def test_refusals_go_to_the_worker_that_claimed_not_to_one_stopped_before(
    store: SqsJobStore, sqs: Any
) -> None:
    queue = JobQueue(store)
    stopped_out, serving_out = io.StringIO(), io.StringIO()
    stopped = JobWorker(queue, {"a": lambda ctx: None}, metrics=EmfMetrics(stream=stopped_out))
    stopped.start()
    await stopped.stop()
    serving = JobWorker(queue, {"a": lambda ctx: None}, metrics=EmfMetrics(stream=serving_out))
    serving.start()
    try:
        url = store.queue_urls["default"]
        sqs.send_message(QueueUrl=url, MessageBody=body("f" * 32, "default"))  # no such job

        async def refused() -> bool:
            return "ClaimRefused" in serving_out.getvalue()

        await eventually(refused, "the claim refusal")
    finally:
        await serving.stop()
    assert stopped_out.getvalue() == ""
    assert totals(documents(serving_out.getvalue())) == {("default", "", "ClaimRefused"): 1}


async def test_unregistered_names_and_forged_queues_add_no_dimension_values(
    store: SqsJobStore, sqs: Any
) -> None:
    """50 made-up names are one ``(unregistered)`` value; a message naming a queue that is
    not the one it arrived on, or a job of another queue, is refused and counted under the
    queue the worker claimed from."""
    queue = JobQueue(store)
    evil = queue.for_tenant("evil")
    unknown = await evil.enqueue_many(
        [EnqueueRequest(f"probe.{n:02d}-{uuid.uuid4().hex[:8]}", {"n": n}) for n in range(50)]
    )
    known = (await queue.enqueue("email.send", {"to": "zoë@example.com"})).job
    elsewhere = (await queue.enqueue("email.send", {"to": "åsa@example.se"}, queue="other")).job
    url = store.queue_urls["default"]
    out = io.StringIO()
    worker = JobWorker(
        queue,
        {"email.send": lambda payload: "ok"},
        queues=["default"],
        concurrency=8,
        metrics=EmfMetrics(stream=out),
    )
    worker.start()
    try:

        async def settled() -> bool:
            jobs = [await queue.get(r.job.id) for r in unknown] + [await queue.get(known.id)]
            return all(j is not None and j.status.value in ("completed", "dead") for j in jobs)

        await eventually(settled, "every job to end", timeout=60)
        for forged in (body("f" * 32, "forged-queue"), body(elsewhere.id, "default")):
            sqs.send_message(QueueUrl=url, MessageBody=forged)

        async def refused() -> bool:
            return totals(documents(out.getvalue()))[("default", "", "ClaimRefused")] >= 2

        await eventually(refused, "both forged messages' refusals")
    finally:
        await worker.stop()
    docs = documents(out.getvalue())
    assert {d.get("JobName") for d in docs} == {UNREGISTERED, "email.send", None}
    assert {d["Queue"] for d in docs} == {"default"}
    summed = totals(docs)
    assert summed[("default", UNREGISTERED, "JobsStarted")] == 50
    assert summed[("default", UNREGISTERED, "JobsDead")] == 50
    assert summed[("default", "email.send", "JobsCompleted")] == 1
    assert summed[("default", "", "ClaimRefused")] == 2
    untouched = await queue.get(elsewhere.id)
    assert untouched is not None and untouched.status is JobStatus.QUEUED


async def test_the_workers_reconciler_sets_the_open_job_gauges(store: SqsJobStore) -> None:
    """``sqsjobs worker --metrics prometheus`` counts after each reconciler pass."""
    from prometheus_client import CollectorRegistry

    from sqsjobs import PrometheusMetrics
    from sqsjobs.cli._worker import reconcile_periodically

    queue = JobQueue(store)
    parents = [(await queue.enqueue("shard.scan", {"shard": n})).job.id for n in range(3)]
    await queue.enqueue("shard.merge", {"into": "Übersicht"}, after=parents)
    registry = CollectorRegistry()
    metrics = PrometheusMetrics(registry=registry)

    def gauge(status: str) -> float | None:
        return registry.get_sample_value("sqsjobs_jobs", {"queue": "default", "status": status})

    task = asyncio.create_task(reconcile_periodically(store, 3600, metrics))
    try:

        async def counted() -> bool:
            return gauge("waiting") is not None

        await eventually(counted, "the first count")
    finally:
        task.cancel()
    assert {s: gauge(s) for s in ("queued", "delayed", "running", "waiting")} == {
        "queued": 3.0,
        "delayed": 0.0,
        "running": 0.0,
        "waiting": 1.0,
    }
    assert registry.get_sample_value("sqsjobs_jobs", {"queue": "other", "status": "queued"}) == 0
