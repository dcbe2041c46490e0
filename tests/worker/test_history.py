"""A job's whole story as its history tells it, written by a real worker and an operator.

The operator's complaint: a dead job retried with ``jobs retry`` was back to ``queued
0/4`` with its old error, nothing said it had died and been sent back, and each attempt
kept only the last error while the first one explained the rest.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from sqsjobs import JobContext, JobRegistry, JobStatus, JobWorker
from sqsjobs.core.lifecycle import STOPPING_ERROR
from sqsjobs.core.times import utc

from .conftest import Env

OPERATOR = "cli:ana@ops-bastion"


async def test_a_job_that_died_was_retried_by_an_operator_and_completed_tells_all_of_it(
    env: Env,
) -> None:
    errors = iter(
        [
            OSError("SMTP relay refused «Zoë Åsa» <zoe@example.com>: 550 mailbox unknown"),
            TimeoutError("relay did not answer in 30 s"),
            ConnectionResetError("relay reset the connection"),
        ]
    )
    registry = JobRegistry()

    @registry.handler("invoice.send")
    async def send(ctx: JobContext) -> dict[str, str]:
        error = next(errors, None)
        if error is not None:
            raise error
        return {"sent": ctx.job.id}

    enqueued = await env.queue.enqueue(
        "invoice.send", {"invoice": "INV-2041"}, tenant="acme", max_attempts=3
    )
    job_id = enqueued.job.id
    worker = JobWorker(env.queue, registry, worker_id="ip-10-0-3-17:4711")
    starts = []
    for _ in range(3):
        starts.append(env.clock.now)
        assert await worker.run_once()
        env.clock.advance(10)  # past any backoff
    dead = await env.queue.get(job_id)
    assert dead is not None and dead.status is JobStatus.DEAD
    assert (dead.attempts, dead.last_error) == (
        3,
        "ConnectionResetError: relay reset the connection",
    )

    retried_at = env.clock.now
    assert await env.store.retry(job_id, retried_at, by=OPERATOR)
    back = await env.queue.get(job_id)
    assert back is not None and (back.status, back.attempts) == (JobStatus.QUEUED, 0)
    # Back to queued 0 of 3, its last error still there: and its history says why.
    assert [(e.kind, e.outcome, e.by) for e in back.history[-2:]] == [
        ("attempt", "dead", None),
        ("retry", "queued", OPERATOR),
    ]

    env.clock.advance(1)
    other = JobWorker(env.queue, registry, worker_id="ip-10-0-7-41:902")
    assert await other.run_once()
    done = await env.queue.get(job_id)
    assert done is not None and done.status is JobStatus.COMPLETED
    assert [(e.kind, e.attempt, e.outcome, e.worker, e.by) for e in done.history] == [
        ("attempt", 1, "retry", "ip-10-0-3-17:4711", None),
        ("attempt", 2, "retry", "ip-10-0-3-17:4711", None),
        ("attempt", 3, "dead", "ip-10-0-3-17:4711", None),
        ("retry", None, "queued", None, OPERATOR),
        ("attempt", 1, "completed", "ip-10-0-7-41:902", None),
    ]
    assert done.history_count == 5
    # The first error is kept, with its class, beside the ones after it.
    assert [e.error for e in done.history[:3]] == [
        "OSError: SMTP relay refused «Zoë Åsa» <zoe@example.com>: 550 mailbox unknown",
        "TimeoutError: relay did not answer in 30 s",
        "ConnectionResetError: relay reset the connection",
    ]
    assert all(e.traceback for e in done.history[:3])  # each failure had one (the last is kept)
    assert [e.started_at for e in done.history[:3]] == [utc(start) for start in starts]
    assert done.history[3].at == utc(retried_at)
    assert done.history == sorted(done.history, key=lambda entry: entry.at)


async def test_a_timeout_is_an_attempt_with_its_error_and_no_traceback(env: Env) -> None:
    started = asyncio.Event()

    async def slow(ctx: JobContext) -> None:
        started.set()
        await asyncio.sleep(30)

    job = (await env.queue.enqueue("report.build", {"month": "2026-11"}, timeout=0.05)).job
    assert await JobWorker(env.queue, {"report.build": slow}).run_once()
    failed = await env.queue.get(job.id)
    assert failed is not None
    [entry] = failed.history
    assert (entry.outcome, entry.traceback) == ("retry", False)
    assert entry.error is not None and entry.error.startswith("JobTimeoutError: ")


async def test_a_run_a_stop_interrupted_is_noted_and_the_next_worker_finishes_it(
    env: Env,
) -> None:
    started = asyncio.Event()
    runs: list[str] = []

    async def transcode(ctx: JobContext) -> str:
        runs.append(ctx.job.locked_by or "")
        if len(runs) == 1:
            started.set()
            await asyncio.sleep(30)  # a long run the deploy interrupts
        return "ok"

    job = (await env.queue.enqueue("video.transcode", {"title": "Żubr"})).job
    first = JobWorker(env.queue, {"video.transcode": transcode}, worker_id="deploy-old")
    first.start()
    await started.wait()
    await first.stop(grace=0.05)
    second = JobWorker(env.queue, {"video.transcode": transcode}, worker_id="deploy-new")
    assert await second.run_once()
    done = await env.queue.get(job.id)
    assert done is not None and done.status is JobStatus.COMPLETED
    entries: list[Any] = [(e.attempt, e.outcome, e.worker, e.error) for e in done.history]
    assert entries == [
        (1, "released", "deploy-old", STOPPING_ERROR),
        (1, "completed", "deploy-new", None),
    ]
    released = done.history[0]
    assert released.started_at is not None and released.at - released.started_at >= timedelta(0)
