"""MemoryJobStore against a small reference model, driven by random operation sequences.

The model restates SPEC §2.4/§2.6 as plainly as possible (a dict of jobs and a sort);
hypothesis drives both with the same enqueue/claim/heartbeat/complete/fail/release/
cancel/clock steps, and after every step every job must read the same in both.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    rule,
)

from sqsjobs import JobFilter, JobQueue, JobStatus, MemoryJobStore

from ..support.clock import FakeClock

RETENTION, DEAD_RETENTION, LEASE = 50.0, 100.0, 10.0


@dataclass
class ModelJob:
    id: str
    priority: int
    run_at: float
    created_at: float
    max_attempts: int
    status: JobStatus
    attempts: int = 0
    token: str | None = None
    lease_until: float | None = None
    ended_at: float | None = None

    def past_retention(self, now: float) -> bool:
        if self.ended_at is None:
            return False
        keep = DEAD_RETENTION if self.status is JobStatus.DEAD else RETENTION
        return now >= self.ended_at + keep

    def end(self, status: JobStatus, now: float) -> None:
        self.status, self.token, self.lease_until = status, None, None
        self.ended_at = (
            now if status in (JobStatus.COMPLETED, JobStatus.DEAD, JobStatus.CANCELLED) else None
        )

    def claimable(self, now: float) -> bool:
        if self.status is JobStatus.QUEUED:
            return True
        if self.status is JobStatus.DELAYED:
            return self.run_at <= now
        return (
            self.status is JobStatus.RUNNING
            and self.lease_until is not None
            and self.lease_until < now
        )


@dataclass(frozen=True)
class Lease:
    job_id: str
    token: str


def seen(instant: float) -> datetime:
    return datetime.fromtimestamp(instant, UTC)


class MemoryStoreMachine(RuleBasedStateMachine):
    leases = Bundle("leases")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = FakeClock()
        self.store = MemoryJobStore(
            clock=self.clock, retention=RETENTION, dead_retention=DEAD_RETENTION
        )
        self.queue = JobQueue(self.store, clock=self.clock, default_lease=LEASE)
        self.model: dict[str, ModelJob] = {}

    def run(self, awaitable):  # type: ignore[no-untyped-def]
        return self.loop.run_until_complete(awaitable)

    def teardown(self) -> None:
        self.loop.close()

    @rule(
        priority=st.integers(-2, 2),
        delay=st.sampled_from([0.0, 0.0, 5.0, 30.0]),
        max_attempts=st.integers(1, 3),
    )
    def enqueue(self, priority: int, delay: float, max_attempts: int) -> None:
        job = self.run(
            self.queue.enqueue("a", priority=priority, delay=delay, max_attempts=max_attempts)
        ).job
        now = self.clock()
        status = JobStatus.DELAYED if delay > 0 else JobStatus.QUEUED
        self.model[job.id] = ModelJob(job.id, priority, now + delay, now, max_attempts, status)

    @rule(target=leases)
    def claim(self) -> Lease | None:
        now = self.clock()
        for job in self.model.values():  # a claim applies every lease that has expired
            final = job.attempts >= job.max_attempts
            if job.claimable(now) and job.status is JobStatus.RUNNING and final:
                job.end(JobStatus.DEAD, now)  # its lease expired on the final attempt
        candidates = sorted(
            (j for j in self.model.values() if j.claimable(now)),
            # Instants as readers see them: datetimes, to the microsecond.
            key=lambda j: (-j.priority, seen(j.run_at), seen(j.created_at), j.id),
        )
        best = candidates[0] if candidates else None
        claimed = self.run(self.store.claim("default", "w", now))
        if best is None:
            assert claimed == []
            return None
        assert [j.id for j in claimed] == [best.id]
        assert claimed[0].lease_token is not None and claimed[0].lease_token != best.token
        best.status, best.attempts = JobStatus.RUNNING, best.attempts + 1
        best.token, best.lease_until = claimed[0].lease_token, now + LEASE
        return Lease(best.id, claimed[0].lease_token)

    def holds(self, lease: Lease | None) -> ModelJob | None:
        if lease is None:
            return None
        job = self.model[lease.job_id]
        ok = job.status is JobStatus.RUNNING and job.token == lease.token
        return job if ok else None

    @rule(lease=leases)
    def heartbeat(self, lease: Lease | None) -> None:
        if lease is None:
            return
        now = self.clock()
        job = self.holds(lease)
        expected = job is not None and job.lease_until is not None and job.lease_until >= now
        got = self.run(self.store.heartbeat(lease.job_id, lease.token, now + LEASE, now))
        assert got is expected
        if expected and job is not None:
            job.lease_until = now + LEASE

    @rule(lease=consumes(leases))
    def complete(self, lease: Lease | None) -> None:
        if lease is None:
            return
        job = self.holds(lease)
        got = self.run(self.store.complete(lease.job_id, lease.token, self.clock(), {"ok": 1}))
        assert got is (job is not None)
        if job is not None:
            job.end(JobStatus.COMPLETED, self.clock())

    @rule(lease=consumes(leases), retry_in=st.sampled_from([None, 0.0, 20.0]))
    def fail(self, lease: Lease | None, retry_in: float | None) -> None:
        if lease is None:
            return
        now = self.clock()
        job = self.holds(lease)
        retry_at = None if retry_in is None else now + retry_in
        got = self.run(self.store.fail(lease.job_id, lease.token, "E: x", retry_at, now))
        assert got is (job is not None)
        if job is None:
            return
        if retry_at is None or job.attempts >= job.max_attempts:
            job.end(JobStatus.DEAD, now)
        else:
            job.end(JobStatus.QUEUED if retry_at <= now else JobStatus.DELAYED, now)
            job.run_at = retry_at

    @rule(lease=consumes(leases))
    def release(self, lease: Lease | None) -> None:
        if lease is None:
            return
        job = self.holds(lease)
        now = self.clock()
        got = self.run(self.store.release(lease.job_id, lease.token, "stopping", now))
        assert got is (job is not None)
        if job is not None:
            job.end(JobStatus.QUEUED, now)
            job.attempts -= 1
            job.run_at = now

    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        if not self.model:
            return
        job = self.model[data.draw(st.sampled_from(list(self.model)))]  # insertion order
        now = self.clock()
        alive = not job.past_retention(now)
        expected = alive and job.status in (JobStatus.QUEUED, JobStatus.DELAYED, JobStatus.RUNNING)
        assert self.run(self.queue.cancel(job.id)) is expected
        if expected:
            job.end(JobStatus.CANCELLED, now)

    @rule(seconds=st.sampled_from([1.0, 6.0, 11.0, 60.0]))
    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    @invariant()
    def every_job_reads_as_the_model_says(self) -> None:
        now = self.clock()
        for job in self.model.values():
            got = self.run(self.store.get(job.id, now))
            if job.past_retention(now):
                assert got is None
                continue
            assert got is not None
            assert (got.status, got.attempts) == (job.status, job.attempts)
            assert got.lease_token == job.token
            if job.status in (JobStatus.QUEUED, JobStatus.DELAYED):
                # The API's datetimes keep microseconds; the clock's reading has more.
                assert got.run_at == datetime.fromtimestamp(job.run_at, UTC)
        listed = self.run(self.store.list(JobFilter(), 1000, None, now)).jobs
        assert {j.id for j in listed} == {
            j.id for j in self.model.values() if not j.past_retention(now)
        }


MemoryStoreMachine.TestCase.settings = settings(
    max_examples=60, stateful_step_count=40, deadline=None
)
TestMemoryStoreModel = MemoryStoreMachine.TestCase
