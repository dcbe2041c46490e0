"""A worker's completion throttled past botocore's retries is tried again, not lost.

The table throttles the completion's ``UpdateItem`` for more tries than botocore makes,
then recovers. The worker must try the same write again (its lease held meanwhile), so
a job on its final attempt completes once, never to be dead-lettered by the next claim
as "lease expired after final attempt". The store's clients make two tries here instead
of five only so that botocore gives up within a second, not fifteen.

The throttling may outlast the lease many times over: heartbeats (the record's
``lease_until`` and the message's visibility) hold it meanwhile, so another worker
polling the queue never sees the job. The heartbeats the store served are what the
tests count, not seconds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from sqsjobs import Backoff, JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.transports.endpoint import Endpoint

from .conftest import FaultyAws
from .faulty_aws import Fault, FaultInjector, FaultPlan

pytestmark = pytest.mark.slow  # writes throttled for several leases of real time

BOTOCORE_TRIES = 2
# The next writes of an outcome are throttled for two rounds of botocore's tries.
THROTTLED_UPDATES = FaultPlan(
    rate=1.0,
    kinds=(Fault.THROTTLE,),
    services=frozenset({"dynamodb"}),
    actions=frozenset({"UpdateItem"}),
    limit=2 * BOTOCORE_TRIES,
)


@pytest.fixture
def two_tries(monkeypatch: pytest.MonkeyPatch) -> None:
    options = Endpoint.client_options

    def fewer(self: Endpoint) -> dict[str, Any]:
        retries = {"mode": "standard", "total_max_attempts": BOTOCORE_TRIES}
        return {**options(self), "retries": retries}

    monkeypatch.setattr(Endpoint, "client_options", fewer)


@pytest.mark.usefixtures("two_tries")
async def test_a_completion_throttled_past_botocores_retries_completes_on_the_final_attempt(
    faulty_aws: FaultyAws, caplog: pytest.LogCaptureFixture
) -> None:
    store = SqsJobStore.create(f"f{uuid.uuid4().hex[:12]}", endpoint_url=faulty_aws.endpoint)
    queue = JobQueue(store)
    job = (await queue.enqueue("label.print", {"tenant": "kraków-5"}, max_attempts=1)).job
    runs: list[int] = []
    dead: list[str] = []

    async def print_label(ctx: JobContext) -> str:
        runs.append(ctx.attempt)
        faulty_aws.injector.start(THROTTLED_UPDATES)  # the next completions are throttled
        return "printed"

    worker = JobWorker(queue, {"label.print": print_label}, on_dead=lambda j, e: dead.append(j.id))
    try:
        with caplog.at_level(logging.INFO, logger="sqsjobs"):
            assert await worker.run_once()
        faulty_aws.injector.stop()
        done = await queue.get(job.id)
        assert not await JobWorker(queue, {"label.print": print_label}).run_once()
    finally:
        faulty_aws.injector.stop()
        await store.aclose()
    assert done is not None
    assert (done.status, done.attempts, done.result) == (JobStatus.COMPLETED, 1, "printed")
    assert runs == [1] and dead == []
    assert faulty_aws.injector.injected == {
        ("dynamodb", "UpdateItem", Fault.THROTTLE): 2 * BOTOCORE_TRIES
    }
    retried = [r for r in caplog.records if r.__dict__.get("event") == "jobs.worker.run_failed"]
    assert [r.levelno for r in retried] == [logging.WARNING, logging.WARNING]
    assert "ProvisionedThroughputExceededException" in retried[0].getMessage()


@pytest.mark.usefixtures("two_tries")
async def test_a_retry_recorded_after_throttling_still_returns_its_message_when_due(
    faulty_aws: FaultyAws,
) -> None:
    """The retried write keeps the claim's message, so it comes back at the backoff, not
    at the end of its 30-second visibility."""
    store = SqsJobStore.create(f"f{uuid.uuid4().hex[:12]}", endpoint_url=faulty_aws.endpoint)
    queue = JobQueue(store, backoff=Backoff(base=1.0, max=1.0, random=lambda: 1.0))
    job = (await queue.enqueue("label.print", {"tenant": "kraków-5"}, lease=30)).job
    runs: list[int] = []

    async def print_label(ctx: JobContext) -> str:
        runs.append(ctx.attempt)
        if ctx.attempt == 1:
            faulty_aws.injector.start(THROTTLED_UPDATES)  # the failure's write is throttled
            raise RuntimeError("printer offline")
        return "printed"

    worker = JobWorker(queue, {"label.print": print_label})
    try:
        assert await worker.run_once()
        faulty_aws.injector.stop()
        failed = await queue.get(job.id)
        assert failed is not None and failed.status is JobStatus.DELAYED
        [again] = await store.claim("default", "w", time.time(), wait=5)
        assert (again.id, again.attempts) == (job.id, 2)
    finally:
        faulty_aws.injector.stop()
        await store.aclose()
    assert runs == [1]


# Seconds: heartbeats every 1.33 s, so a loaded machine (the suite twice at once) still
# beats well inside each lease, as production leases of 30 s do by far.
LEASE = 4.0
# The completion's UpdateItem (it names completed_at; a heartbeat's does not) is
# throttled until the store has served this many heartbeats: more than three leases.
BEATS_THROTTLED = 3 * 3 + 1
COMPLETIONS = "completed_at"
THROTTLED_COMPLETIONS = FaultPlan(
    rate=1.0,
    kinds=(Fault.THROTTLE,),
    services=frozenset({"dynamodb"}),
    actions=frozenset({"UpdateItem"}),
    body_contains=COMPLETIONS,
)


class Heartbeats(SqsJobStore):
    """Records each heartbeat's answer; ``recover`` says when the faults end."""

    injector: FaultInjector
    beats: list[bool]
    recover: Callable[[list[bool]], bool]

    async def heartbeat(
        self, job_id: str, lease_token: str, lease_until: float, now: float
    ) -> bool:
        held = await super().heartbeat(job_id, lease_token, lease_until, now)
        self.beats.append(held)
        if self.recover(self.beats):
            self.injector.stop()
        return held


def heartbeats(faulty_aws: FaultyAws, recover: Callable[[list[bool]], bool]) -> Heartbeats:
    store = Heartbeats.create(
        f"f{uuid.uuid4().hex[:12]}", endpoint_url=faulty_aws.endpoint, max_attempts=2
    )
    assert isinstance(store, Heartbeats)
    store.injector, store.beats, store.recover = faulty_aws.injector, [], recover
    return store


async def claimed(queue: JobQueue, job_id: str, timeout: float = 20.0) -> None:
    """Wait until ``job_id`` runs: its completion is then throttled for three leases."""
    deadline = time.monotonic() + timeout
    while (job := await queue.get(job_id)) is None or job.status is not JobStatus.RUNNING:
        assert time.monotonic() < deadline, "the job was not claimed in time"
        await asyncio.sleep(0.05)


def twin(store: SqsJobStore, endpoint: str) -> SqsJobStore:
    """The store as another worker process would open it (its own clients and claims)."""
    return SqsJobStore(
        table_name=store.table_name,
        queue_urls=store.queue_urls,
        endpoint_url=endpoint,
        wait_time=1.0,
    )


@pytest.mark.parametrize(
    ("kind", "tenant"), [("async", "kraków-5"), ("sync", "łódź-2"), ("async", "split-3")]
)
async def test_a_completion_throttled_for_three_leases_completes_on_the_final_attempt(
    faulty_aws: FaultyAws, caplog: pytest.LogCaptureFixture, kind: str, tenant: str
) -> None:
    store = heartbeats(faulty_aws, lambda beats: len(beats) >= BEATS_THROTTLED)
    queue = JobQueue(store)
    job = (await queue.enqueue("label.print", {"tenant": tenant}, max_attempts=1, lease=LEASE)).job
    runs: list[int] = []
    elsewhere: list[str] = []

    def print_label(ctx: JobContext) -> str:
        runs.append(ctx.attempt)
        faulty_aws.injector.start(THROTTLED_COMPLETIONS)  # the completion is throttled now
        return f"printed for {ctx.payload['tenant']}"

    async def print_label_async(ctx: JobContext) -> str:
        return print_label(ctx)

    handler = print_label if kind == "sync" else print_label_async
    worker = JobWorker(queue, {"label.print": handler})
    other_store = twin(store, faulty_aws.endpoint)  # polls the same queue the whole time
    other = JobWorker(
        JobQueue(other_store), {"label.print": lambda ctx: elsewhere.append(ctx.job.id)}
    )
    try:
        with caplog.at_level(logging.INFO, logger="sqsjobs"):
            run = asyncio.create_task(worker.run_once())
            await claimed(queue, job.id)  # the other poller comes after: it may not win it
            other.start()
            assert await run
        done = await queue.get(job.id)
    finally:
        faulty_aws.injector.stop()
        await other.stop(grace=1.0)
        await store.aclose()
        await other_store.aclose()
    assert done is not None
    assert (done.status, done.attempts, done.result) == (
        JobStatus.COMPLETED,
        1,
        f"printed for {tenant}",
    )
    assert runs == [1] and elsewhere == []
    # Heartbeats went on through the throttling. On a loaded machine one may come after
    # the lease lapsed and be refused: the write is then tried once more and finds the
    # record still under its token, so the run still ends in one completion, above.
    assert len(store.beats) >= BEATS_THROTTLED
    throttled = faulty_aws.injector.injected[("dynamodb", "UpdateItem", Fault.THROTTLE)]
    assert throttled > 2 * 3  # more than three calls' worth of botocore's two tries
    failed = [r for r in caplog.records if r.__dict__.get("event") == "jobs.worker.run_failed"]
    assert failed and all(r.levelno == logging.WARNING for r in failed)
    assert [r.__dict__.get("event") for r in caplog.records].count("jobs.complete") == 1
    assert not [r for r in caplog.records if r.__dict__.get("event") == "jobs.dead"]


async def test_a_heartbeat_refused_by_the_completions_own_lost_write_counts_as_written(
    faulty_aws: FaultyAws, caplog: pytest.LogCaptureFixture
) -> None:
    """The completion is applied but its response is lost, and botocore's retries are
    throttled: the next heartbeat is refused by the completed record. Trying the same
    write once more finds the record it left (``_written_by_us``): written, not lost."""
    store = heartbeats(faulty_aws, lambda beats: not beats[-1])
    queue = JobQueue(store)
    job = (await queue.enqueue("label.print", {"tenant": "göteborg-3"}, lease=LEASE)).job
    lost_then_throttled = dataclasses.replace(THROTTLED_COMPLETIONS, first=(Fault.LOST_RESPONSE,))
    completed: list[str] = []

    async def print_label(ctx: JobContext) -> str:
        faulty_aws.injector.start(lost_then_throttled)
        return "printed"

    worker = JobWorker(
        queue, {"label.print": print_label}, on_complete=lambda j: completed.append(j.id)
    )
    try:
        with caplog.at_level(logging.INFO, logger="sqsjobs"):
            assert await worker.run_once()
        done = await queue.get(job.id)
    finally:
        faulty_aws.injector.stop()
        await store.aclose()
    assert done is not None
    assert (done.status, done.attempts, done.result) == (JobStatus.COMPLETED, 1, "printed")
    assert False in store.beats  # the completed record refused a heartbeat
    assert faulty_aws.injector.injected[("dynamodb", "UpdateItem", Fault.LOST_RESPONSE)] == 1
    assert completed == [job.id]
    events = [r.__dict__.get("event") for r in caplog.records]
    assert events.count("jobs.complete") == 1 and "jobs.lease_lost" not in events


DENIED_COMPLETIONS = FaultPlan(
    rate=1.0,
    kinds=(Fault.DENIED,),
    services=frozenset({"dynamodb"}),
    actions=frozenset({"UpdateItem"}),
    body_contains=COMPLETIONS,
    limit=3,
)


async def test_a_completion_denied_three_times_then_allowed_completes_on_the_final_attempt(
    faulty_aws: FaultyAws,
) -> None:
    """AccessDeniedException, as while an IAM change propagates: no throttling, so botocore
    does not retry it, and three tries once let the write go and the job die."""
    store = SqsJobStore.create(f"f{uuid.uuid4().hex[:12]}", endpoint_url=faulty_aws.endpoint)
    queue = JobQueue(store)
    job = (await queue.enqueue("card.charge", {"cents": 4_999}, max_attempts=1, lease=3.0)).job

    def charge(ctx: JobContext) -> str:
        faulty_aws.injector.start(DENIED_COMPLETIONS)
        return "ch_3PqA"

    try:
        assert await JobWorker(queue, {"card.charge": charge}).run_once()
        done = await queue.get(job.id)
    finally:
        faulty_aws.injector.stop()
        await store.aclose()
    assert done is not None
    assert (done.status, done.result, done.attempts) == (JobStatus.COMPLETED, "ch_3PqA", 1)
    assert faulty_aws.injector.injected[("dynamodb", "UpdateItem", Fault.DENIED)] == 3
