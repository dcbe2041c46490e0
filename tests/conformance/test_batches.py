"""Batches (``queue.batch``, SPEC §7) on every store, through both producer faces.

A batch's callbacks wait for it: ``on_complete`` runs once every job has ended,
``on_success`` once they all completed, and is cancelled when one did not. Each job's end
counts once, however it ended and however often its outcome was written.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from sqsjobs import (
    BatchStatus,
    EnqueueRequest,
    JobConfigError,
    JobContext,
    JobQueue,
    JobStatus,
    JobWorker,
    SyncJobQueue,
)

from .harness import Harness
from .support import claim, get

Q, W, C = JobStatus.QUEUED, JobStatus.WAITING, JobStatus.CANCELLED


def producer(harness: Harness, face: str) -> Callable[..., Awaitable[Any]]:
    """``batch`` through the async queue, or the blocking one from a thread."""
    import asyncio

    if face == "async":
        return JobQueue(harness.store, clock=harness.clock).batch
    blocking = SyncJobQueue(harness.store, clock=harness.clock)
    return lambda *args, **kw: asyncio.to_thread(blocking.batch, *args, **kw)


@pytest.fixture(params=["async", "blocking"])
def batch_face(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def requests(count: int) -> list[EnqueueRequest]:
    return [EnqueueRequest("invoice.render", {"n": n, "kunde": "Müller"}) for n in range(count)]


async def end_all(harness: Harness, outcome: Callable[[int], str]) -> None:
    """Claim every queued job of ``default`` and end each as ``outcome(n)`` says:
    completed or dead. (The tests send callbacks to ``other``, out of its way.)"""
    n = 0
    for _ in range(400):
        jobs = await claim(harness, limit=10)
        if not jobs:
            return
        for job in jobs:
            token, now = job.lease_token or "", harness.now()
            if outcome(n) == "dead":
                assert await harness.store.fail(job.id, token, "E: x", None, now)
            else:
                assert await harness.store.complete(job.id, token, now, {"n": n})
            n += 1


async def test_callbacks_wait_for_the_batch_and_on_complete_runs_once(
    harness: Harness, batch_face: str
) -> None:
    batch = await producer(harness, batch_face)(
        requests(30),
        on_complete=EnqueueRequest("invoice.summary", {"month": "2026-11"}, queue="other"),
        on_success=EnqueueRequest("invoice.celebrate", queue="other"),
    )
    assert len(batch.job_ids) == 30 and len(batch.callback_ids) == 2
    for job_id in batch.job_ids:
        member = await get(harness, job_id)
        assert (member.status, member.batch_id, member.batch_callback) == (Q, batch.id, None)
    on_complete, on_success = [await get(harness, c) for c in batch.callback_ids]
    assert (on_complete.status, on_complete.batch_callback) == (W, "on_complete")
    assert (on_success.status, on_success.batch_callback) == (W, "on_success")
    queue = JobQueue(harness.store, clock=harness.clock)
    assert await queue.batch_status(batch.id) == BatchStatus(
        batch.id, 30, 0, 0, 0, 30, batch.callback_ids
    )
    await end_all(harness, lambda n: "dead" if n == 7 else "completed")
    assert await queue.batch_status(batch.id) == BatchStatus(
        batch.id, 30, 29, 1, 0, 0, batch.callback_ids
    )
    assert (await get(harness, on_complete.id)).status is Q
    cancelled = await get(harness, on_success.id)
    assert cancelled.status is C
    assert cancelled.last_error is not None and "1 dead" in cancelled.last_error
    [summary] = await claim(harness, "other", limit=10)
    assert summary.id == on_complete.id
    assert await claim(harness, "other", limit=10) == []


async def test_on_success_runs_when_every_job_completed(harness: Harness) -> None:
    queue = JobQueue(harness.store, clock=harness.clock)
    batch = await queue.batch(
        requests(12), on_success=EnqueueRequest("invoice.celebrate", queue="other")
    )
    await end_all(harness, lambda n: "completed")
    [celebrate] = batch.callback_ids
    assert (await get(harness, celebrate)).status is Q
    status = await queue.batch_status(batch.id)
    assert status is not None and (status.completed, status.open) == (12, 0)


async def test_a_cancelled_job_ends_its_part_of_the_batch(harness: Harness) -> None:
    queue = JobQueue(harness.store, clock=harness.clock)
    batch = await queue.batch(
        requests(3), on_complete=EnqueueRequest("invoice.summary", queue="other")
    )
    assert await harness.store.cancel(batch.job_ids[1], harness.now())
    await end_all(harness, lambda n: "completed")
    assert await queue.batch_status(batch.id) == BatchStatus(
        batch.id, 3, 2, 0, 1, 0, batch.callback_ids
    )
    assert (await get(harness, batch.callback_ids[0])).status is Q


async def test_bad_batches_are_refused_before_anything_is_written(harness: Harness) -> None:
    queue = JobQueue(harness.store, clock=harness.clock)
    for bad, says in [
        ([], "a batch holds 1 to 10000 jobs, not 0"),
        ([EnqueueRequest("a", idempotency_key="k")], "an idempotency key, parents"),
        ([EnqueueRequest("a", debounce_key="k", debounce=5)], "or a debounce key"),
        (["not a request"], "pass an EnqueueRequest"),
    ]:
        with pytest.raises(JobConfigError, match=says):
            await queue.batch(bad)
    assert (await queue.list()).jobs == []
    assert await queue.batch_status("no-such-batch") is None


async def test_the_callback_reads_the_batch_it_followed(harness: Harness) -> None:
    queue = JobQueue(harness.store, clock=harness.clock)
    seen: list[BatchStatus | None] = []

    async def summary(ctx: JobContext) -> None:
        seen.append(ctx.batch)

    batch = await queue.batch(
        requests(4), on_complete=EnqueueRequest("invoice.summary", queue="other")
    )
    handlers = {"invoice.render": lambda ctx: ctx.payload, "invoice.summary": summary}
    worker = JobWorker(queue, handlers, queues=["default", "other"])
    for _ in range(5):
        assert await worker.run_once()
    assert seen == [BatchStatus(batch.id, 4, 4, 0, 0, 0, batch.callback_ids)]


@pytest.mark.slow
async def test_two_hundred_jobs_at_concurrency_16_call_on_complete_once(
    harness: Harness,
) -> None:
    """The issue's proof: one job dies, so on_complete runs once and on_success never."""
    import asyncio

    from sqsjobs import JobFatalError

    queue = JobQueue(harness.store, clock=harness.clock)
    callbacks: list[str] = []

    async def render(ctx: JobContext) -> int:
        if ctx.payload["n"] == 113:
            raise JobFatalError("the template for invoice 113 is broken")
        return int(ctx.payload["n"])

    async def summary(ctx: JobContext) -> None:
        # The batch's record lives the harness's 4 s retention past its last job's end: a
        # loaded machine may start the callback later, and it is then given no batch.
        counts = "expired" if ctx.batch is None else f"{ctx.batch.completed}/{ctx.batch.dead}"
        callbacks.append(f"{ctx.job.batch_callback}:{counts}")

    batch = await queue.batch(
        requests(200),
        on_complete=EnqueueRequest("invoice.summary", queue="other"),
        on_success=EnqueueRequest("invoice.summary", queue="other"),
    )
    handlers = {"invoice.render": render, "invoice.summary": summary}
    worker = JobWorker(queue, handlers, queues=["default", "other"], concurrency=16)
    async with worker:
        # About 15 s on an idle emulator; a loaded machine may take several times that.
        deadline = time.monotonic() + 240
        while not callbacks or await _still_open(queue, batch.id):
            assert time.monotonic() < deadline, f"on_complete did not run: {callbacks}"
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # a second on_complete, were there one, would run now
    # on_success never ran: it was cancelled
    assert callbacks in (["on_complete:199/1"], ["on_complete:expired"]), callbacks
    on_success = await harness.store.get(batch.callback_ids[1], harness.now())
    assert on_success is None or on_success.status is C  # None: past the harness's retention


async def _still_open(queue: JobQueue, batch_id: str) -> bool:
    status = await queue.batch_status(batch_id)
    return status is not None and status.open > 0  # None: past the harness's retention


async def test_a_tenants_view_writes_its_batch_for_it_and_reads_only_its_own(
    harness: Harness, batch_face: str
) -> None:
    queue = JobQueue(harness.store, clock=harness.clock)
    blocking = SyncJobQueue(harness.store, clock=harness.clock)
    acme, globex = queue.for_tenant("acme"), blocking.for_tenant("globex")
    if batch_face == "async":
        batch = await acme.batch(
            requests(3), on_complete=EnqueueRequest("invoice.summary", queue="other")
        )
        mine, theirs = acme.batch_status, queue.for_tenant("globex").batch_status
    else:
        import asyncio

        batch = await asyncio.to_thread(
            globex.batch, requests(3), on_complete=EnqueueRequest("invoice.summary")
        )
        mine = lambda b: asyncio.to_thread(globex.batch_status, b)  # noqa: E731
        theirs = queue.for_tenant("acme").batch_status
    tenant = "acme" if batch_face == "async" else "globex"
    for job_id in [*batch.job_ids, *batch.callback_ids]:
        assert (await get(harness, job_id)).tenant == tenant
    status = await mine(batch.id)
    assert status is not None and (status.total, status.open, status.tenant) == (3, 3, tenant)
    assert await theirs(batch.id) is None  # another tenant's batch is as unknown as none
    mixed = await queue.batch(
        [EnqueueRequest("invoice.render", tenant="acme"), EnqueueRequest("invoice.render")]
    )
    assert (await queue.batch_status(mixed.id)) is not None
    assert await acme.batch_status(mixed.id) is None  # not all of it is acme's
    with pytest.raises(JobConfigError, match=r"batch\(\) on_success has tenant 'globex'"):
        await acme.batch(requests(2), on_success=EnqueueRequest("x", tenant="globex"))
    with pytest.raises(JobConfigError, match=r"batch\(\) item 1 has tenant 'globex'"):
        await acme.batch([EnqueueRequest("a"), EnqueueRequest("b", tenant="globex")])
