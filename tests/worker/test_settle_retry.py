"""Recording an outcome when the store call fails: tried again until the store answers.

A completion (or failure, or release) whose store call raises after the client's own
retries is not given up: the run tries the same write again with backoff, heartbeating
meanwhile at lease/3, so no other claim can take the job, however long the store takes.
The tries end when the write is accepted, when the lease is found taken by another
claim, or when the worker stops (``test_settle_stop``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from sqsjobs import Backoff, JobContext, JobQueue, JobStatus, JobWorker, MemoryJobStore
from sqsjobs.worker import lease as _lease

from ..support.clock import FakeClock
from .flaky import FlakyWrites, Hooks, events, flaky_env
from .watch import SAFETY_NET

# Heartbeats the store served before the failing write may succeed: more than 3 leases.
BEATS_FAILING = 3 * 3 + 1
# A real-clock lease whose heartbeats (a third of it apart) outlast the stalls of a
# loaded machine running the suite twice at once: a beat late by a lease loses it.
LEASE = 2.4


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


def real_clock_env(**options: Any) -> tuple[FlakyWrites, JobQueue]:
    store = FlakyWrites(
        {"complete": 10_000},
        clock=time.time,
        recover=lambda s: len(s.beats) >= BEATS_FAILING,
        **options,
    )
    return store, JobQueue(store)


@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_a_completion_failing_for_three_leases_is_recorded_and_runs_nowhere_else(
    caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    """Heartbeats hold the lease while the write fails, lease after lease: a worker
    serving the same store meanwhile never claims the job, and it completes once."""
    store, queue = real_clock_env()
    job = (
        await queue.enqueue(
            "invoice.render", {"client": "Café Ümlaut"}, max_attempts=1, lease=LEASE
        )
    ).job
    runs: list[str] = []

    def render(ctx: JobContext) -> str:
        runs.append(ctx.job.id)
        return f"rendered for {ctx.payload['client']}"

    async def render_async(ctx: JobContext) -> str:
        return render(ctx)

    hooks = Hooks()
    worker = hooks.worker(queue, {"invoice.render": render if kind == "sync" else render_async})
    elsewhere: list[str] = []
    other = JobWorker(queue, {"invoice.render": lambda ctx: elsewhere.append(ctx.job.id)})
    other.start()
    try:
        with caplog.at_level(logging.INFO, logger="sqsjobs"):
            assert await worker.run_once()
    finally:
        await other.stop(grace=1.0)
    done = await queue.get(job.id)
    assert done is not None
    assert (done.status, done.attempts, done.result) == (
        JobStatus.COMPLETED,
        1,
        "rendered for Café Ümlaut",
    )
    assert runs == [job.id] and elsewhere == [] and hooks.calls == [("complete", job.id)]
    assert len(store.beats) >= BEATS_FAILING and all(store.beats)  # never stopped, never lost
    tries = store.tries("complete")
    assert len(tries) >= 3 and all(t == tries[0] for t in tries)
    assert events(caplog, "jobs.dead") == [] and len(events(caplog, "jobs.complete")) == 1
    failed = events(caplog, "jobs.worker.run_failed")
    assert failed and {r.levelno for r in failed} == {logging.WARNING}


class SlowFirstTry(FlakyWrites):
    """The first completion is answered only after four heartbeats: a call that botocore
    keeps retrying for longer than the lease."""

    async def complete(self, job_id: str, lease_token: str, now: float, result: Any) -> bool:
        if not self.tries("complete"):
            self.calls.append(("slow complete", (job_id, lease_token, now)))
            await self.watch.until(lambda: len(self.beats) >= 4)
        return await super().complete(job_id, lease_token, now, result)


async def test_heartbeats_go_on_while_one_try_outlasts_the_lease() -> None:
    store = SlowFirstTry({}, clock=time.time)
    queue = JobQueue(store)
    job = (await queue.enqueue("audit.export", {"tenant": "nuuk-4"}, lease=0.6)).job
    hooks = Hooks()
    assert await hooks.worker(queue, {"audit.export": lambda ctx: "exported"}).run_once()
    done = await queue.get(job.id)
    assert done is not None and (done.status, done.result) == (JobStatus.COMPLETED, "exported")
    assert len(store.beats) >= 4 and all(store.beats)  # during the one slow try
    assert hooks.calls == [("complete", job.id)]


async def test_heartbeats_end_once_the_outcome_is_recorded_before_the_hooks_run() -> None:
    store = FlakyWrites({"complete": 1}, clock=time.time)
    queue = JobQueue(store)
    # A lease long enough that a loaded machine's stall does not lapse it (a beat late by
    # a lease is refused, which this test would take for a beat after the outcome).
    job = (await queue.enqueue("audit.export", {"tenant": "nuuk-4"}, lease=1.2)).job
    hooked: list[int] = []

    async def on_complete(done: Any) -> None:
        hooked.append(len(store.beats))
        await asyncio.sleep(2.0)  # five heartbeat intervals in which none may come

    worker = JobWorker(queue, {"audit.export": lambda ctx: "ok"}, on_complete=on_complete)
    assert await worker.run_once()
    record = await queue.get(job.id)
    assert record is not None and record.status is JobStatus.COMPLETED
    assert hooked == [len(store.beats)] and False not in store.beats


async def test_failures_are_logged_first_three_then_every_tenth(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_lease, "WRITE_RETRY", Backoff(base=0.001, max=0.002))
    _, store, queue = flaky_env({"complete": 25})
    job = (await queue.enqueue("sitemap.build", {"site": "example.org"})).job
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await JobWorker(queue, {"sitemap.build": lambda ctx: "built"}).run_once()
    done = await queue.get(job.id)
    assert done is not None and done.status is JobStatus.COMPLETED
    assert len(store.tries("complete")) == 26
    logged = events(caplog, "jobs.worker.run_failed")
    assert [r.__dict__["failures"] for r in logged] == [1, 2, 3, 10, 20]
    assert {r.levelno for r in logged} == {logging.WARNING}
    assert "from now on every 10th failure is logged" in logged[2].getMessage()


async def test_a_heartbeat_refused_by_the_completions_own_applied_write_counts_as_written(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first completion took effect but raised (its response lost), and the next
    tries fail: the completed record refuses the next heartbeat. The memory store answers
    the repeated write with a refusal; the record read then shows the run's own write
    (its status and ``updated_at``), so the completion counts as written, not lost."""
    store = FlakyWrites(
        {"complete": 10_000},
        clock=time.time,
        applied=frozenset({"complete"}),
        recover=lambda s: False in s.beats,
    )
    queue = JobQueue(store)
    job = (await queue.enqueue("receipt.mail", {"to": "zoë@example.org"}, lease=0.6)).job
    hooks = Hooks()
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await hooks.worker(queue, {"receipt.mail": lambda ctx: "sent"}).run_once()
    done = await queue.get(job.id)
    assert done is not None and (done.status, done.result) == (JobStatus.COMPLETED, "sent")
    assert store.beats[-1] is False  # refused by the record our own write left
    assert hooks.calls == [("complete", job.id)]
    assert len(events(caplog, "jobs.complete")) == 1 and events(caplog, "jobs.lease_lost") == []


async def test_a_lease_taken_by_another_claim_during_the_retries_records_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The lease lapsed (the clock jumped past it) and another worker claimed the job:
    the next heartbeat is refused, one more try of the write fails, and the record read
    shows the other claim. Nothing is recorded and no hook runs."""
    clock = FakeClock()
    store = FlakyWrites({"complete": 10_000}, clock=clock)
    queue = JobQueue(store, clock=clock)
    job = (await queue.enqueue("feed.sync", {"feed": "ñandú"}, lease=0.3, max_attempts=2)).job
    hooks = Hooks()
    worker = hooks.worker(queue, {"feed.sync": lambda ctx: "ok"})
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        running = asyncio.ensure_future(worker.run_once())
        await store.watch.until(lambda: len(store.tries("complete")) >= 2)
        clock.advance(60.0)  # the lease lapses; nothing awaits before the other claim
        [taken] = await store.claim("default", "worker-other", clock(), limit=1)
        assert await asyncio.wait_for(running, SAFETY_NET)
    assert False in store.beats
    assert taken.id == job.id and taken.attempts == 2 and hooks.calls == []
    [lost] = events(caplog, "jobs.lease_lost")
    assert lost.getMessage() == (
        f"Job 'feed.sync' ({job.id}) belongs to another claim: "
        "its lease was lost while its completion was being recorded"
    )
    assert [r for r in events(caplog, "jobs.worker.run_failed") if r.levelno >= logging.ERROR] == []
    held = await queue.get(job.id)
    assert held is not None and (held.status, held.locked_by) == (JobStatus.RUNNING, "worker-other")


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


async def test_a_write_refused_as_invalid_is_let_go_and_the_next_claim_counts_it(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No retry fixes a request the store refuses: holding it would keep the job (and a
    worker's slot) until a stop, whose release would then run it again uncounted. It is
    let go after ``PERMANENT_PATIENCE`` leases of refusals, whatever the number of tries."""
    monkeypatch.setattr(_lease, "WRITE_RETRY", Backoff(base=0.001, max=0.002))
    # Each refused try takes 10.7 s of the store's clock: 90 s (three leases) is 10 tries.
    clock, store, queue = flaky_env({"complete": 10_000}, invalid=True, advance=10.7)
    job = (await queue.enqueue("resume.render", {"pages": 3}, max_attempts=2, lease=30.0)).job

    async def render(ctx: JobContext) -> dict[str, int]:
        return {"bytes": 48_213}

    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await JobWorker(queue, {"resume.render": render}).run_once()
    assert len(store.tries("complete")) == 10
    (given_up,) = [r for r in events(caplog, "jobs.worker.run_failed") if r.levelno >= 40]
    assert "after 10 tries in 96s" in given_up.getMessage()
    assert "refuses it as invalid" in given_up.getMessage()
    assert "runs it again (this was attempt 1 of 2)" in given_up.getMessage()
    held = await queue.get(job.id)
    assert held is not None and held.status is JobStatus.RUNNING  # until its lease ends
    beats = len(store.beats)
    clock.advance(31.5)
    assert len(store.beats) == beats  # heartbeats stopped with the tries
    assert await JobWorker(queue, {"resume.render": render}).run_once()
    again = await queue.get(job.id)
    assert again is not None and again.attempts == 2  # the next claim counted it


class CredentialBlip(Exception):
    """An AWS refusal that is no throttling and passes in seconds: an expired token during
    a credential rollover, an access denied while an IAM change propagates."""

    def __init__(self, code: str) -> None:
        super().__init__(f"{code}: The security token included in the request is expired")
        self.response = {
            "Error": {"Code": code, "Message": "The security token is expired"},
            "ResponseMetadata": {"HTTPStatusCode": 400},
        }


@pytest.mark.parametrize(
    "code", ["ExpiredTokenException", "AccessDeniedException", "UnrecognizedClientException"]
)
async def test_a_success_survives_a_credential_blip_on_its_final_attempt(
    monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    """Three refusals that are not throttling (they took 1.5 s under the old count), then
    the store answers: the success is recorded, the job never dead."""
    monkeypatch.setattr(_lease, "WRITE_RETRY", Backoff(base=0.001, max=0.002))
    clock, store, queue = flaky_env({"complete": 3}, advance=0.5)
    refusal = CredentialBlip(code)

    async def blip(name: str, write: Any, *arguments: Any) -> bool:
        store.calls.append((name, arguments))
        if store.failures[name] > 0:
            store.failures[name] -= 1
            clock.advance(0.5)
            raise refusal
        return bool(await write())

    monkeypatch.setattr(store, "_try", blip)
    job = (await queue.enqueue("card.charge", {"cents": 4_999}, max_attempts=1, lease=3.0)).job
    charged: list[int] = []

    async def charge(ctx: JobContext) -> str:
        charged.append(ctx.payload["cents"])
        return "ch_3PqA"

    assert await JobWorker(queue, {"card.charge": charge}).run_once()
    done = await queue.get(job.id)
    assert done is not None
    assert (done.status, done.result, done.attempts) == (JobStatus.COMPLETED, "ch_3PqA", 1)
    assert charged == [4_999] and len(store.tries("complete")) == 4


def test_which_store_errors_a_retry_may_get_past() -> None:
    from sqsjobs.core.errors import retryable

    from .flaky import Refused, Throttled

    def answered(status: int, code: str) -> Exception:
        error = Exception(code)
        error.response = {  # type: ignore[attr-defined]
            "Error": {"Code": code},
            "ResponseMetadata": {"HTTPStatusCode": status},
        }
        return error

    assert not retryable(Refused("too large"))
    assert not retryable(answered(403, "AccessDeniedException"))
    assert retryable(answered(400, "ProvisionedThroughputExceededException"))
    assert retryable(answered(400, "ThrottlingException"))
    assert retryable(answered(500, "InternalServerError"))
    assert retryable(Throttled("no response at all"))
    assert retryable(ConnectionResetError())
    flagged = Exception("said")
    flagged.retryable = False  # type: ignore[attr-defined]
    assert not retryable(flagged)
