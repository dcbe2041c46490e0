"""Rules only the memory store has: claim order, capacity, wake-ups, copies (SPEC §2.6)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from sqsjobs import (
    EnqueueRequest,
    Job,
    JobBatchError,
    JobConfigError,
    JobFilter,
    JobStatus,
    MemoryJobStore,
)
from sqsjobs.core.lifecycle import LEASE_EXPIRED_ERROR
from sqsjobs.producer.enqueue import prepare

from .support.clock import REALISTIC_START, FakeClock
from .support.config import make_config

T = REALISTIC_START


@pytest.fixture
def store(clock: FakeClock) -> MemoryJobStore:
    return MemoryJobStore(clock=clock, retention=10, dead_retention=20)


CONFIG = make_config(default_max_attempts=3, clock=lambda: T)


def make(at: float = T, job_id: str | None = None, **options: Any) -> Job:
    options.setdefault("name", "mem.job")
    job = prepare(CONFIG, EnqueueRequest(**options), at).job
    return job if job_id is None else job.model_copy(update={"id": job_id})


async def put(store: MemoryJobStore, job: Job, fingerprint: str | None = None) -> Job:
    return (await store.put(job, fingerprint)).job


# -- claim order ------------------------------------------------------------------------


async def test_claim_order_reads_instants_as_readers_see_them(
    store: MemoryJobStore, clock: FakeClock
) -> None:
    """A job released at ``now`` and one enqueued at the same ``now`` are due at the same
    instant for every reader, digits below the microsecond aside: the older goes first."""
    older = await put(store, make(clock(), job_id="b" * 32))
    clock.advance(1.0)  # to ...742.2439704, which a datetime keeps as ...742.243970
    [claimed] = await store.claim("default", "w", clock())
    assert await store.release(claimed.id, claimed.lease_token or "", "stopping", clock())
    newer = await put(store, make(clock(), job_id="a" * 32))
    [first] = await store.claim("default", "w", clock())
    assert first.id == older.id
    [second] = await store.claim("default", "w", clock())
    assert second.id == newer.id


async def test_claim_order_is_priority_then_run_at_then_created_at_then_id(
    store: MemoryJobStore,
) -> None:
    jobs = {
        "tie_c": make(T - 10, "c" * 32),
        "tie_a": make(T - 10, "a" * 32),
        "urgent": make(T - 1, priority=5),
        "earlier_run": make(T - 5, run_at=make(T - 20).run_at),
        "earlier_created": make(T - 12, run_at=make(T - 10).run_at),
        "tie_b": make(T - 10, "b" * 32),
        "low": make(T - 30, priority=-1),
    }
    for job in jobs.values():
        await put(store, job)
    order = [(await store.claim("default", "w", T))[0].id for _ in jobs]
    expected = ["urgent", "earlier_run", "earlier_created", "tie_a", "tie_b", "tie_c", "low"]
    assert order == [jobs[label].id for label in expected]


async def test_one_claim_of_many_returns_them_in_claim_order(store: MemoryJobStore) -> None:
    low = await put(store, make(T - 3))
    high = await put(store, make(T - 1, priority=1))
    mid = await put(store, make(T - 2))
    assert [job.id for job in await store.claim("default", "w", T, limit=10)] == [
        high.id,
        low.id,
        mid.id,
    ]


async def test_a_released_job_queues_behind_older_ones(store: MemoryJobStore) -> None:
    first = await put(store, make(T - 2))
    second = await put(store, make(T - 1))
    [claimed] = await store.claim("default", "w", T)
    assert claimed.id == first.id
    assert await store.release(first.id, claimed.lease_token or "", "E: x", T + 1)
    order = [job.id for job in await store.claim("default", "w", T + 2, limit=2)]
    assert order == [second.id, first.id]


async def test_a_job_seen_early_by_an_earlier_clock_is_not_lost(store: MemoryJobStore) -> None:
    """Callers' clocks may disagree slightly; a job not due for one claim stays claimable."""
    queued = await put(store, make(T))
    delayed = await put(store, make(T, delay=5))
    assert [job.id for job in await store.claim("default", "w1", T + 10)] == [queued.id]
    assert await store.claim("default", "w2", T + 1) == []
    assert [job.id for job in await store.claim("default", "w2", T + 10)] == [delayed.id]


async def test_an_expired_lease_seen_early_by_an_earlier_clock_is_not_lost(
    store: MemoryJobStore,
) -> None:
    leased = await put(store, make(T, lease=5))
    [claimed] = await store.claim("default", "w1", T)
    queued = await put(store, make(T + 1, priority=1))
    assert [job.id for job in await store.claim("default", "w2", T + 10)] == [queued.id]
    assert await store.claim("default", "w3", T + 2) == []
    [again] = await store.claim("default", "w3", T + 10)
    assert (again.id, again.attempts) == (leased.id, 2)
    assert again.lease_token != claimed.lease_token


# -- lease expiry -----------------------------------------------------------------------


async def test_final_attempt_expiry_dead_letters_then_claims_the_next(
    store: MemoryJobStore, caplog: pytest.LogCaptureFixture
) -> None:
    doomed = await put(store, make(T - 1, lease=1, max_attempts=1))
    [claimed] = await store.claim("default", "w1", T)
    waiting = await put(store, make(T))
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        [next_job] = await store.claim("default", "w2", T + 2)
    assert next_job.id == waiting.id
    dead = await store.get(doomed.id, T + 2)
    assert dead is not None
    assert (dead.status, dead.last_error, dead.updated_at) == (
        JobStatus.DEAD,
        LEASE_EXPIRED_ERROR,
        next_job.updated_at,
    )
    [record] = [r for r in caplog.records if getattr(r, "event", None) == "jobs.dead"]
    assert record.levelno == logging.WARNING
    assert (record.job_id, record.job_name, record.queue, record.attempt, record.error) == (  # type: ignore[attr-defined]
        doomed.id,
        "mem.job",
        "default",
        1,
        LEASE_EXPIRED_ERROR,
    )
    assert claimed.payload is None


async def test_an_unclaimed_queue_keeps_an_expired_job_running(store: MemoryJobStore) -> None:
    job = await put(store, make(T, lease=1, max_attempts=1, queue="other"))
    await store.claim("other", "w1", T)
    assert await store.claim("default", "w1", T + 100) == []
    after = await store.get(job.id, T + 100)
    assert after is not None
    assert after.status is JobStatus.RUNNING


# -- capacity ---------------------------------------------------------------------------


async def _complete_one(store: MemoryJobStore, at: float) -> Job:
    job = await put(store, make(at))
    [claimed] = await store.claim("default", "w", at)
    assert await store.complete(job.id, claimed.lease_token or "", at, None)
    return job


async def test_at_capacity_expired_terminal_records_are_purged_first(
    store: MemoryJobStore, clock: FakeClock
) -> None:
    small = MemoryJobStore(capacity=2, clock=clock, retention=10, dead_retention=20)
    done = await _complete_one(small, T)
    queued = await put(small, make(T))
    with pytest.raises(JobConfigError) as caught:
        await small.put(make(T), None)
    assert caught.value.code == "store_full"
    assert "capacity of 2 jobs; queued work is never dropped" in str(caught.value)
    clock.advance(10)
    newer = await put(small, make(T + 10))
    assert await small.get(done.id, T + 10) is None
    assert {j.id for j in (await small.list(JobFilter(), 10, None, T + 10)).jobs} == {
        queued.id,
        newer.id,
    }
    with pytest.raises(JobConfigError) as caught:
        await small.put(make(T + 10), None)
    assert caught.value.code == "store_full"
    assert await small.get(queued.id, T + 10) is not None


async def test_a_full_store_still_answers_duplicates(clock: FakeClock) -> None:
    small = MemoryJobStore(capacity=1, clock=clock)
    prepared = prepare(CONFIG, EnqueueRequest("mem.job", idempotency_key="k"), T)
    first = await small.put(prepared.job, prepared.fingerprint)
    again = await small.put(make(T, idempotency_key="k"), prepared.fingerprint)
    assert (again.duplicate, again.job) == (True, first.job)


async def test_put_many_stops_when_the_store_fills(clock: FakeClock) -> None:
    small = MemoryJobStore(capacity=2, clock=clock)
    items = [(make(T, payload=i), None) for i in range(3)]
    with pytest.raises(JobBatchError) as caught:
        await small.put_many(items)
    assert [r.job.payload for r in caught.value.results] == [0, 1]
    assert isinstance(caught.value.__cause__, JobConfigError)
    assert caught.value.__cause__.code == "store_full"


# -- wake-ups ---------------------------------------------------------------------------


async def test_an_idle_claim_wakes_for_a_put_from_another_task(store: MemoryJobStore) -> None:
    waiting = asyncio.create_task(store.claim("default", "w", T, wait=5))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    job = await put(store, make(T))
    [claimed] = await asyncio.wait_for(waiting, timeout=4)
    assert (claimed.id, claimed.status) == (job.id, JobStatus.RUNNING)


async def test_a_put_to_another_queue_does_not_satisfy_a_waiting_claim(
    store: MemoryJobStore,
) -> None:
    waiting = asyncio.create_task(store.claim("default", "w", T, wait=0.2))
    await asyncio.sleep(0.01)
    await put(store, make(T, queue="other"))
    assert await waiting == []
    assert len(await store.claim("other", "w", T)) == 1


async def test_a_waiting_claim_takes_a_delayed_job_once_it_falls_due(
    store: MemoryJobStore,
) -> None:
    job = await put(store, make(T, delay=0.05))
    [claimed] = await store.claim("default", "w", T, wait=5)
    assert claimed.id == job.id


async def test_a_waiting_claim_times_out_empty(store: MemoryJobStore) -> None:
    assert await store.claim("default", "w", T, wait=0.05) == []


# -- copies and pages -------------------------------------------------------------------


async def test_every_read_is_a_new_object(store: MemoryJobStore) -> None:
    job = make(T, payload={"a": [1]})
    stored = await put(store, job)
    first, second = await store.get(job.id, T), await store.get(job.id, T)
    [claimed] = await store.claim("default", "w", T)
    payloads = [job.payload, stored.payload, claimed.payload]
    assert first is not None
    assert second is not None
    payloads += [first.payload, second.payload]
    assert len({id(p) for p in payloads}) == len(payloads)
    assert all(p == {"a": [1]} for p in payloads)


@pytest.mark.parametrize(("count", "sizes"), [(5, [2, 2, 1]), (4, [2, 2]), (2, [2]), (0, [0])])
async def test_pages_are_full_until_the_last(
    store: MemoryJobStore, count: int, sizes: list[int]
) -> None:
    for i in range(count):
        await put(store, make(T + i))
    cursor, seen = None, []
    while True:
        page = await store.list(JobFilter(), 2, cursor, T + 10)
        seen.append(len(page.jobs))
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == sizes


async def test_sync_view_shares_the_records(store: MemoryJobStore) -> None:
    job = store.sync.put(make(T), None).job
    assert store.sync.get(job.id, T) == await store.get(job.id, T)
    assert [j.id for j in store.sync.list(JobFilter(), 10, None, T).jobs] == [job.id]
    assert store.sync.cancel(job.id, T)
    assert (await store.get(job.id, T)).status is JobStatus.CANCELLED  # type: ignore[union-attr]
    assert [r.job.id for r in store.sync.put_many([(make(T), None)])] != [job.id]


# -- retry of a dead job ------------------------------------------------------------------


async def test_retry_queues_a_dead_job_again_with_its_attempts_reset(store: MemoryJobStore) -> None:
    job = await put(store, make(T, max_attempts=2))
    for at in (T + 0.25, T + 0.5):
        [claimed] = await store.claim("default", "w1", at)
        assert await store.fail(job.id, claimed.lease_token or "", "ValueError: bad sku", at, at)
    dead = await store.get(job.id, T + 0.5)
    assert dead is not None and (dead.status, dead.attempts) == (JobStatus.DEAD, 2)
    assert not await store.retry("no-such-job", T + 1)
    assert await store.retry(job.id, T + 1.125)
    revived = await store.get(job.id, T + 1.125)
    assert revived is not None
    assert (revived.status, revived.attempts, revived.last_error) == (
        JobStatus.QUEUED,
        0,
        "ValueError: bad sku",
    )
    assert revived.run_at.timestamp() == pytest.approx(T + 1.125)
    assert not await store.retry(job.id, T + 1.25)  # queued now: only dead jobs retry
    assert store.sync.retry(job.id, T + 1.25) is False
    [again] = await store.claim("default", "w2", T + 1.25)
    assert (again.id, again.attempts) == (job.id, 1)


async def test_retry_refuses_a_dead_job_past_its_retention(store: MemoryJobStore) -> None:
    job = await put(store, make(T, max_attempts=1))
    [claimed] = await store.claim("default", "w1", T)
    assert await store.fail(job.id, claimed.lease_token or "", "E: gone", None, T)
    assert not store.sync.retry(job.id, T + 20.5)  # dead_retention is 20 s here
