"""The run algorithm: outcomes, retries with backoff, timeouts, lease loss, hooks, logs."""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from sqsjobs import (
    Job,
    JobConfigError,
    JobContext,
    JobFatalError,
    JobStatus,
    JobTimeoutError,
    JobWorker,
)

from .conftest import Env


async def test_success_completes_with_the_result(env: Env) -> None:
    job = (await env.queue.enqueue("a", {"n": 2})).job
    worker = JobWorker(env.queue, {"a": lambda payload: {"double": payload["n"] * 2}})
    assert await worker.run_once()
    done = await env.queue.get(job.id)
    assert done is not None
    assert (done.status, done.result, done.attempts) == (JobStatus.COMPLETED, {"double": 4}, 1)
    assert done.completed_at == done.updated_at
    assert not await worker.run_once()


async def test_failure_retries_after_full_jitter_backoff_then_dead_letters(env: Env) -> None:
    async def boom(ctx: JobContext) -> None:
        raise RuntimeError(f"attempt {ctx.attempt}")

    job = (await env.queue.enqueue("a", max_attempts=3)).job
    worker = JobWorker(env.queue, {"a": boom})
    start = env.clock()
    assert await worker.run_once()
    first = await env.queue.get(job.id)
    assert first is not None and first.status is JobStatus.DELAYED
    assert first.run_at.timestamp() == pytest.approx(start + 1.0)  # base * 2**0, jitter 1.0
    assert first.last_error == "RuntimeError: attempt 1"
    assert not await worker.run_once()  # not due yet
    env.clock.advance(1.0)
    assert await worker.run_once()
    second = await env.queue.get(job.id)
    assert second is not None and second.run_at.timestamp() == pytest.approx(env.clock() + 2.0)
    env.clock.advance(2.0)
    assert await worker.run_once()
    dead = await env.queue.get(job.id)
    assert dead is not None
    assert (dead.status, dead.attempts, dead.last_error) == (
        JobStatus.DEAD,
        3,
        "RuntimeError: attempt 3",
    )


async def test_fatal_error_dead_letters_without_retry(env: Env) -> None:
    async def poison(ctx: JobContext) -> None:
        raise JobFatalError("card declined for good")

    job = (await env.queue.enqueue("a")).job
    assert await JobWorker(env.queue, {"a": poison}).run_once()
    dead = await env.queue.get(job.id)
    assert dead is not None and dead.status is JobStatus.DEAD and dead.attempts == 1
    assert dead.last_error == "JobFatalError: card declined for good"


async def test_unknown_handler_is_a_poison_pill(env: Env) -> None:
    job = (await env.queue.enqueue("nobody.handles.this")).job
    assert await JobWorker(env.queue, {"a": lambda ctx: None}).run_once()
    dead = await env.queue.get(job.id)
    assert dead is not None and dead.status is JobStatus.DEAD
    assert dead.last_error == "JobFatalError: Unknown job handler: 'nobody.handles.this'"


@pytest.mark.parametrize(
    ("result", "code"),
    [
        ({"charged_at": datetime.now(UTC)}, "invalid_payload"),
        ({"when": object()}, "invalid_payload"),
        ("x" * 70_000, "payload_too_large"),
    ],
    ids=["datetime", "object", "too-large"],
)
async def test_a_result_that_is_not_storable_dead_letters_the_job_after_one_run(
    env: Env, result: Any, code: str
) -> None:
    """The handler's work is done when its result is refused: a retry would do it again."""
    job = (await env.queue.enqueue("card.charge", {"cents": 1999}, max_attempts=5)).job
    charged: list[int] = []
    seen: list[tuple[str, bool]] = []

    def charge(ctx: JobContext) -> Any:
        charged.append(ctx.attempt)
        return result

    def on_fail(job: Job, error: BaseException, will_retry: bool, delay: float | None) -> None:
        seen.append((getattr(error, "code", ""), will_retry))

    worker = JobWorker(env.queue, {"card.charge": charge}, on_fail=on_fail)
    assert await worker.run_once()
    env.clock.advance(3600)
    assert not await worker.run_once()
    dead = await env.queue.get(job.id)
    assert dead is not None and (dead.status, dead.attempts) == (JobStatus.DEAD, 1)
    assert charged == [1] and seen == [(code, False)]
    assert dead.last_error is not None and dead.last_error.startswith("JobConfigError: ")
    assert JobConfigError(code, "").code == code
    expected = "not JSON" if code == "invalid_payload" else "the limit is 65536 bytes"
    assert expected in dead.last_error
    assert "its work is not done again" in dead.last_error


async def test_timeout_cancels_the_handler_after_setting_ctx_cancelled(env: Env) -> None:
    seen: list[bool] = []

    async def slow(ctx: JobContext) -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            seen.append(ctx.cancelled.is_set())
            return "swallowed the cancellation"
        return "finished"

    job = (await env.queue.enqueue("a", timeout=0.05)).job
    assert await JobWorker(env.queue, {"a": slow}).run_once()
    assert seen == [True]
    failed = await env.queue.get(job.id)
    assert failed is not None and failed.status is JobStatus.DELAYED and failed.result is None
    assert failed.last_error == f"JobTimeoutError: {JobTimeoutError(0.05)}"


async def test_sync_handler_overrunning_is_timed_out_at_once_but_keeps_its_slot(env: Env) -> None:
    release = threading.Event()

    def blocking(ctx: JobContext) -> str:
        release.wait(5)
        return "late"

    job = (await env.queue.enqueue("a", timeout=0.05, max_attempts=1)).job
    worker = JobWorker(env.queue, {"a": blocking})
    assert await worker.run_once()
    dead = await env.queue.get(job.id)
    assert dead is not None and dead.status is JobStatus.DEAD
    assert dead.last_error is not None and dead.last_error.startswith("JobTimeoutError")
    assert worker.state.in_flight == 1  # the thread still runs
    release.set()
    for _ in range(100):
        if worker.state.in_flight == 0:
            break
        await asyncio.sleep(0.01)
    assert worker.state.in_flight == 0
    after = await env.queue.get(job.id)
    assert after is not None and after.result is None  # its late return was discarded


async def test_lease_loss_cancels_the_run_and_records_nothing(env: Env) -> None:
    started, outcome = asyncio.Event(), []

    async def long(ctx: JobContext) -> None:
        started.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            outcome.append(ctx.cancelled.is_set())
            raise

    completes: list[Any] = []
    job = (await env.queue.enqueue("a", lease=0.06)).job
    worker = JobWorker(env.queue, {"a": long}, on_complete=completes.append)
    run = asyncio.ensure_future(worker.run_once())
    await started.wait()
    env.clock.advance(1.0)  # the lease (0.06 s) has expired: the next heartbeat is refused
    await asyncio.wait_for(run, 5)
    assert outcome == [True] and completes == []
    held = await env.queue.get(job.id)
    assert held is not None and held.status is JobStatus.RUNNING  # the next claim owns it
    assert held.last_error is None


async def test_heartbeats_keep_the_lease_of_a_long_run(env: Env) -> None:
    leases: list[Any] = []

    async def long(ctx: JobContext) -> str:
        for _ in range(3):
            await asyncio.sleep(0.05)
            env.clock.advance(0.05)
            current = await env.queue.get(ctx.job.id)
            assert current is not None
            leases.append(current.lease_until)
        assert await ctx.heartbeat()
        return "ok"

    job = (await env.queue.enqueue("a", lease=0.09)).job
    assert await JobWorker(env.queue, {"a": long}).run_once()
    done = await env.queue.get(job.id)
    assert done is not None and done.status is JobStatus.COMPLETED
    assert leases == sorted(leases) and leases[0] != leases[-1]


async def test_hooks_run_after_the_outcome_and_a_raising_hook_changes_nothing(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[tuple[Any, ...]] = []

    async def on_fail(job: Any, error: BaseException, will_retry: bool, delay: Any) -> None:
        calls.append(("fail", job.id, type(error).__name__, will_retry, delay))

    def on_dead(job: Any, error: BaseException) -> None:
        calls.append(("dead", job.id, str(error)))
        raise RuntimeError("hook is broken")

    def on_complete(job: Any) -> None:
        calls.append(("complete", job.id))

    async def handler(payload: Any) -> None:
        if payload == "bad":
            raise ValueError("bad input")

    bad = (await env.queue.enqueue("a", "bad", max_attempts=2)).job
    good = (await env.queue.enqueue("a", "good", priority=-1)).job
    worker = JobWorker(
        env.queue, {"a": handler}, on_fail=on_fail, on_dead=on_dead, on_complete=on_complete
    )
    assert await worker.run_once() and await worker.run_once()
    env.clock.advance(2.0)
    with caplog.at_level(logging.ERROR, logger="sqsjobs"):
        assert await worker.run_once()
    assert calls == [
        ("fail", bad.id, "ValueError", True, 1.0),
        ("complete", good.id),
        ("fail", bad.id, "ValueError", False, None),
        ("dead", bad.id, "bad input"),
    ]
    dead = await env.queue.get(bad.id)
    assert dead is not None and dead.status is JobStatus.DEAD
    assert [r.event for r in caplog.records if r.event == "jobs.hook_failed"] == [  # type: ignore[attr-defined]
        "jobs.hook_failed"
    ]


async def test_ctx_log_merges_the_callers_extra_with_job_fields(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    async def handler(ctx: JobContext) -> None:
        ctx.log.info("sending", extra={"recipient_count": 3})

    with caplog.at_level(logging.DEBUG, logger="sqsjobs"):
        job = (await env.queue.enqueue("a", {"secret": "never-logged"})).job
        await JobWorker(env.queue, {"a": handler}).run_once()
    record = next(r for r in caplog.records if r.getMessage() == "sending")
    assert record.__dict__["recipient_count"] == 3
    assert (record.job_id, record.job_name, record.queue, record.attempt) == (  # type: ignore[attr-defined]
        job.id,
        "a",
        "default",
        1,
    )
    events = [r.__dict__.get("event") for r in caplog.records]
    assert events[:1] == ["jobs.enqueue"] and "jobs.claim" in events and "jobs.complete" in events
    assert all("never-logged" not in str(r.__dict__) for r in caplog.records)
