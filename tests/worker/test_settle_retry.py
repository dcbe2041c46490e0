"""Recording an outcome when the store call fails: tried again while the lease holds.

A completion (or failure, or release) whose store call raises after the client's own
retries is not given up at once: the run tries the same write again with backoff,
heartbeating meanwhile, until the store answers or the lease ends. Only then is the
outcome left unrecorded, and the log says what the next claim will do with the job.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from typing import Any

import pytest

from sqsjobs import Backoff, JobContext, JobQueue, JobStatus, JobWorker, MemoryJobStore
from sqsjobs._lifecycle import LEASE_EXPIRED_ERROR

from ..support.clock import FakeClock
from .conftest import Env
from .watch import Watch


class Throttled(Exception):
    """What a store call raises when its backend keeps refusing it."""


class FlakyWrites(MemoryJobStore):
    """Writes after a claim raise their first ``failures[name]`` times, as a throttled table.

    ``advance`` moves the clock at every failure (time the failed call took);
    ``refuse_heartbeats`` makes the lease look lost to another claim.
    """

    def __init__(
        self, failures: dict[str, int], *, clock: Any, advance: float = 0.0, **options: Any
    ) -> None:
        super().__init__(clock=clock, **options)
        self.failures = Counter(failures)
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.beats = 0
        self.refuse_heartbeats = False
        self._advance = advance
        self._clock = clock
        self.watch = Watch()

    def _try(self, name: str, *arguments: Any) -> None:
        self.calls.append((name, arguments))
        self.watch.changed()
        if self.failures[name] > 0:
            self.failures[name] -= 1
            if self._advance:
                self._clock.advance(self._advance)
            raise Throttled(f"{name}: ProvisionedThroughputExceededException: slow down")

    def tries(self, name: str) -> list[tuple[Any, ...]]:
        return [arguments for called, arguments in self.calls if called == name]

    async def complete(self, job_id: str, lease_token: str, now: float, result: Any) -> bool:
        self._try("complete", job_id, lease_token, now, result)
        return await super().complete(job_id, lease_token, now, result)

    async def fail(
        self, job_id: str, lease_token: str, error: str, retry_at: float | None, now: float
    ) -> bool:
        self._try("fail", job_id, lease_token, error, retry_at, now)
        return await super().fail(job_id, lease_token, error, retry_at, now)

    async def release(self, job_id: str, lease_token: str, error: str, now: float) -> bool:
        self._try("release", job_id, lease_token, error, now)
        return await super().release(job_id, lease_token, error, now)

    async def heartbeat(
        self, job_id: str, lease_token: str, lease_until: float, now: float
    ) -> bool:
        self.beats += 1
        if self.refuse_heartbeats:
            return False
        return await super().heartbeat(job_id, lease_token, lease_until, now)


class Hooks:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def complete(self, job: Any) -> None:
        self.calls.append(("complete", job.id))

    def fail(self, job: Any, error: BaseException, will_retry: bool, delay: Any) -> None:
        self.calls.append(("fail", job.id, will_retry))

    def dead(self, job: Any, error: BaseException) -> None:
        self.calls.append(("dead", job.id))

    def worker(self, queue: JobQueue, handlers: Any, **options: Any) -> JobWorker:
        return JobWorker(
            queue,
            handlers,
            on_complete=self.complete,
            on_fail=self.fail,
            on_dead=self.dead,
            **options,
        )


def events(caplog: pytest.LogCaptureFixture, event: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.__dict__.get("event") == event]


def flaky_env(failures: dict[str, int], **options: Any) -> tuple[FakeClock, FlakyWrites, JobQueue]:
    clock = FakeClock()
    store = FlakyWrites(failures, clock=clock, **options)
    backoff = Backoff(base=1.0, max=8.0, random=lambda: 1.0)
    return clock, store, JobQueue(store, clock=clock, backoff=backoff)


async def test_a_completion_refused_by_a_throttled_store_is_retried_on_the_final_attempt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, store, queue = flaky_env({"complete": 2})
    job = (
        await queue.enqueue("resume.render", {"titre": "Résumé", "pages": 3}, max_attempts=1)
    ).job
    runs: list[int] = []

    async def render(ctx: JobContext) -> dict[str, int]:
        runs.append(ctx.attempt)
        return {"bytes": 48_213}

    hooks = Hooks()
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await hooks.worker(queue, {"resume.render": render}).run_once()
    done = await queue.get(job.id)
    assert done is not None
    assert (done.status, done.attempts, done.result) == (JobStatus.COMPLETED, 1, {"bytes": 48_213})
    assert runs == [1] and hooks.calls == [("complete", job.id)]
    tries = store.tries("complete")
    assert len(tries) == 3 and all(t == tries[0] for t in tries)  # the same write, same `now`
    retried = events(caplog, "jobs.worker.run_failed")
    assert [r.levelno for r in retried] == [logging.WARNING, logging.WARNING]
    assert "trying again in" in retried[0].getMessage()
    assert events(caplog, "jobs.dead") == [] and len(events(caplog, "jobs.complete")) == 1
    clock.advance(3_600.0)
    assert not await JobWorker(queue, {"resume.render": render}).run_once()


async def test_a_failure_refused_by_a_throttled_store_is_recorded_once() -> None:
    clock, store, queue = flaky_env({"fail": 2})
    job = (await queue.enqueue("invoice.send", {"tenant": "zürich-7"}, max_attempts=3)).job

    async def send(ctx: JobContext) -> None:
        raise ConnectionError("smtp.example.net refused the connection")

    hooks = Hooks()
    assert await hooks.worker(queue, {"invoice.send": send}).run_once()
    failed = await queue.get(job.id)
    assert failed is not None
    assert (failed.status, failed.attempts) == (JobStatus.DELAYED, 1)
    assert failed.last_error == "ConnectionError: smtp.example.net refused the connection"
    assert failed.run_at.timestamp() == pytest.approx(clock() + 1.0)
    assert hooks.calls == [("fail", job.id, True)]
    tries = store.tries("fail")
    assert len(tries) == 3 and all(t == tries[0] for t in tries)  # same retry_at and `now`


async def test_a_dead_letter_refused_by_a_throttled_store_is_recorded_once() -> None:
    _, _, queue = flaky_env({"fail": 1})
    job = (await queue.enqueue("ledger.post", {"tenant": "oslo-2"}, max_attempts=1)).job

    async def post(ctx: JobContext) -> None:
        raise ValueError("account 4471 is closed")

    hooks = Hooks()
    assert await hooks.worker(queue, {"ledger.post": post}).run_once()
    dead = await queue.get(job.id)
    assert dead is not None
    assert (dead.status, dead.last_error) == (JobStatus.DEAD, "ValueError: account 4471 is closed")
    assert hooks.calls == [("fail", job.id, False), ("dead", job.id)]


@pytest.mark.parametrize(
    ("max_attempts", "then"),
    [
        (2, "the next claim after its lease runs it again (this was attempt 1 of 2)"),
        (1, "this was its final attempt (1 of 1): the next claim after its lease dead-letters it"),
    ],
)
async def test_when_the_lease_ends_first_nothing_is_recorded_and_the_log_says_what_follows(
    caplog: pytest.LogCaptureFixture, max_attempts: int, then: str
) -> None:
    # Each failed call takes 20 of the lease's 30 seconds (on the injected clock).
    clock, store, queue = flaky_env({"complete": 1_000}, advance=20.0)
    job = (await queue.enqueue("report.build", max_attempts=max_attempts, lease=30.0)).job
    hooks = Hooks()
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await hooks.worker(queue, {"report.build": lambda ctx: "ok"}).run_once()
    assert len(store.tries("complete")) == 2 and hooks.calls == []
    held = await queue.get(job.id)
    assert held is not None and (held.status, held.attempts) == (JobStatus.RUNNING, 1)
    [gave_up] = [r for r in events(caplog, "jobs.worker.run_failed") if r.levelno == logging.ERROR]
    assert gave_up.getMessage() == (
        f"Could not record the completion of job 'report.build' ({job.id}) within its lease: "
        f"Throttled: complete: ProvisionedThroughputExceededException: slow down; {then}"
    )
    assert events(caplog, "jobs.complete") == []
    store.failures.clear()
    clock.advance(1.0)
    again = await JobWorker(queue, {"report.build": lambda ctx: "ok"}).run_once()
    after = await queue.get(job.id)
    assert after is not None
    if max_attempts == 1:  # what the log line said: the next claim dead-letters it
        assert not again
        assert (after.status, after.last_error) == (JobStatus.DEAD, LEASE_EXPIRED_ERROR)
    else:  # the next claim runs it again
        assert again and (after.status, after.attempts) == (JobStatus.COMPLETED, 2)


async def test_heartbeats_hold_the_lease_while_the_write_is_retried_within_one_lease() -> None:
    """On real clocks the retries stop when the lease they started in ends, though
    heartbeats keep extending it: a write refused for good cannot hold a slot forever."""
    store = FlakyWrites({"complete": 1_000}, clock=time.time)
    queue = JobQueue(store)
    job = (await queue.enqueue("thumbnail.make", lease=1.2)).job
    worker = JobWorker(queue, {"thumbnail.make": lambda ctx: "ok"})
    started = time.monotonic()
    assert await worker.run_once()
    elapsed = time.monotonic() - started
    assert 0.8 < elapsed < 3.0
    assert store.beats >= 2  # lease / 3 = 0.4 s apart, during the retries
    held = await queue.get(job.id)
    assert held is not None and held.status is JobStatus.RUNNING and held.lease_until is not None
    assert held.lease_until.timestamp() > time.time()  # still held by the last heartbeat


async def test_a_heartbeat_refused_during_the_retries_stops_them_and_records_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, store, queue = flaky_env({"complete": 1_000})
    job = (await queue.enqueue("feed.sync", lease=0.3)).job
    store.refuse_heartbeats = True  # another claim owns it: the next beat says so
    hooks = Hooks()
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await hooks.worker(queue, {"feed.sync": lambda ctx: "ok"}).run_once()
    assert time.monotonic() - started < 2.0
    assert hooks.calls == [] and store.beats >= 1
    [lost] = events(caplog, "jobs.lease_lost")
    assert lost.getMessage() == (
        f"Job 'feed.sync' ({job.id}) belongs to another claim: "
        "its lease was lost while its completion was being recorded"
    )
    assert [r for r in events(caplog, "jobs.worker.run_failed") if r.levelno >= logging.ERROR] == []


async def test_stop_ends_a_write_being_retried_within_twice_its_grace_and_releases_the_job(
    env: Env,
) -> None:
    store = FlakyWrites({"complete": 1_000}, clock=env.clock)
    queue = JobQueue(store, clock=env.clock)
    job = (await queue.enqueue("video.transcode")).job
    hooks = Hooks()
    worker = hooks.worker(queue, {"video.transcode": lambda ctx: "ok"})
    worker.start()
    await store.watch.until(lambda: len(store.tries("complete")) > 0)
    started = time.monotonic()
    await worker.stop(grace=0.25)
    assert time.monotonic() - started < 0.25 * 2 + 0.5
    released = await queue.get(job.id)
    assert released is not None
    assert (released.status, released.attempts, released.last_error) == (
        JobStatus.QUEUED,
        0,
        "worker is stopping",
    )
    assert hooks.calls == [] and worker.state.in_flight == 0


async def test_a_release_refused_by_a_throttled_store_is_retried(env: Env) -> None:
    store = FlakyWrites({"release": 2}, clock=env.clock)
    queue = JobQueue(store, clock=env.clock)
    job = (await queue.enqueue("index.rebuild")).job
    started = asyncio.Event()

    async def long(ctx: JobContext) -> None:
        started.set()
        await asyncio.sleep(30)

    worker = JobWorker(queue, {"index.rebuild": long})
    worker.start()
    await started.wait()
    assert worker.state.in_flight == 1
    await worker.stop(grace=2.0)  # the handler ignores nothing: the release follows at once
    released = await queue.get(job.id)
    assert released is not None and (released.status, released.attempts) == (JobStatus.QUEUED, 0)
    assert len(store.tries("release")) == 3


async def test_a_run_raising_outside_its_handler_logs_what_the_next_claim_does(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    broken = Backoff(base=1.0, max=8.0, random=lambda: 1 / 0)  # a defect in the run, not a store
    queue = JobQueue(MemoryJobStore(clock=clock), clock=clock, backoff=broken)
    job = (await queue.enqueue("mail.merge", max_attempts=4)).job

    async def merge(ctx: JobContext) -> None:
        raise RuntimeError("template missing")

    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await JobWorker(queue, {"mail.merge": merge}).run_once()
    [line] = events(caplog, "jobs.worker.run_failed")
    assert line.getMessage() == (
        f"Running job {job.id} raised outside its handler: ZeroDivisionError: division by zero; "
        "unless its outcome was recorded, the next claim after its lease runs it again "
        "(this was attempt 1 of 4)"
    )
