"""The store end to end behind the fault layer: producers and workers on a faulty emulator.

Three runs:

- *Every first attempt* of every SQS and DynamoDB request fails (a seeded mix of
  throttling, 500s, dropped connections and lost responses after the request was
  applied), so every write meets its own lost first try. Deterministic: each job runs
  exactly once and every outcome is accepted exactly once.
- *Ten percent* of requests fail at random (seeded; ``SQSJOBS_FAULT_SEED`` replays the
  mix), with 200 jobs from every kind of producer call and two workers.
- *Every try* of one request fails: ``PutItem`` or ``SendMessage``, before or after
  being applied. Enqueue must raise, and what it wrote must still complete.

What must hold: every enqueue either returns a job that then exists or raises (never
success for an unwritten job, and never a refusal of its own lost write); every returned
job completes, and no record is left waiting without a message (those an enqueue that
raised left behind are the reconciler's, as in production); workers keep serving.
Retries are botocore's (standard mode, as the store configures its clients), not loops
of ours.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from botocore.exceptions import BotoCoreError, ClientError

from sqsjobs import (
    EnqueueRequest,
    EnqueueResult,
    Job,
    JobBatchError,
    JobContext,
    JobFatalError,
    JobQueue,
    JobStatus,
    JobStoreError,
    JobWorker,
    SyncJobQueue,
)
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.transports.endpoint import Endpoint
from sqsjobs.aws.wire.items import stored_from_item

from .conftest import FaultyAws
from .faulty_aws import OBSERVER_CONFIG, TRANSIENT, Fault, FaultPlan

LEASE = 5.0
WARM_UP = "warm.up"
PUT = frozenset({"PutItem"})
SEND = frozenset({"SendMessage"})


@dataclass
class Ledger:
    """What the handlers and hooks saw, per job id."""

    runs: Counter[str] = field(default_factory=Counter)
    completed: Counter[str] = field(default_factory=Counter)
    dead: Counter[str] = field(default_factory=Counter)

    def handlers(self) -> dict[str, Callable[[JobContext], Any]]:
        async def ok(ctx: JobContext) -> str:
            self.runs[ctx.job.id] += 1
            await asyncio.sleep(0.01)
            return "ok"

        async def flaky(ctx: JobContext) -> str:
            self.runs[ctx.job.id] += 1
            if ctx.attempt == 1:
                raise RuntimeError("first attempt fails")
            return "ok"

        async def fatal(ctx: JobContext) -> None:
            self.runs[ctx.job.id] += 1
            raise JobFatalError("no retry can fix this")

        return {"ok": ok, "flaky": flaky, "fatal": fatal}

    def on_complete(self, job: Job) -> None:
        self.completed[job.id] += 1

    def on_dead(self, job: Job, error: BaseException) -> None:
        self.dead[job.id] += 1


def fresh_store(endpoint: str, **kwargs: Any) -> SqsJobStore:
    prefix = f"f{uuid.uuid4().hex[:12]}"
    store = SqsJobStore.create(prefix, endpoint_url=endpoint, wait_time=1.0, **kwargs)
    visible_after_a_lease(store, endpoint, LEASE)
    return store


def visible_after_a_lease(store: SqsJobStore, endpoint: str, lease: float) -> None:
    """Set every queue's visibility to the jobs' lease, as the templates advise: a message
    whose receive lost its response comes back within a lease, not after 30 s (as on AWS)."""
    sqs = boto3.client("sqs", endpoint_url=endpoint, config=OBSERVER_CONFIG)
    try:
        for url in store.queue_urls.values():
            attributes = {"VisibilityTimeout": str(int(lease))}
            sqs.set_queue_attributes(QueueUrl=url, Attributes=attributes)
    finally:
        sqs.close()


def twin(store: SqsJobStore, endpoint: str) -> SqsJobStore:
    """The store as another process would open it (its own clients and deliveries)."""
    return SqsJobStore(
        table_name=store.table_name,
        queue_urls=store.queue_urls,
        dead_letter_queue_urls=store.dead_letter_queue_urls,
        endpoint_url=endpoint,
        wait_time=1.0,
    )


@asynccontextmanager
async def workers(
    store: SqsJobStore, endpoint: str, ledger: Ledger, count: int, concurrency: int
) -> AsyncIterator[list[JobWorker]]:
    stores = [twin(store, endpoint) for _ in range(count)]
    started = [
        JobWorker(
            JobQueue(s),
            ledger.handlers(),
            concurrency=concurrency,
            on_complete=ledger.on_complete,
            on_dead=ledger.on_dead,
        )
        for s in stores
    ]
    try:
        for each in stores:
            await warm_up(each)
        for worker in started:
            worker.start()
        yield started
    finally:
        for worker in started:
            await worker.stop(grace=10)
        for s in stores:
            await s.aclose()


async def warm_up(store: SqsJobStore) -> None:
    """Run one job through ``store`` before any fault: the faults then fall on the jobs'
    calls, not on the store's first description of its queue and table."""
    await JobQueue(store).enqueue(WARM_UP, lease=LEASE)
    deadline = time.monotonic() + 10
    while not (jobs := await store.claim("default", "warm-up", time.time(), wait=1)):
        assert time.monotonic() < deadline, "the warm-up job never arrived"
    assert await store.complete(jobs[0].id, jobs[0].lease_token or "", time.time(), None)


def table_records(store: SqsJobStore, endpoint: str) -> dict[str, Job]:
    """Every record in the store's table but the warm-up jobs (an observer's reads); the
    table's other items (workers' presence records, payload bodies) are no records."""
    client = boto3.client("dynamodb", endpoint_url=endpoint, config=OBSERVER_CONFIG)
    found: dict[str, Job] = {}
    try:
        for page in client.get_paginator("scan").paginate(TableName=store.table_name):
            for item in page["Items"]:
                if not str(item["pk"]["S"]).startswith("job#"):
                    continue
                job = stored_from_item(item).job
                if job.name != WARM_UP:
                    found[job.id] = job
    finally:
        client.close()
    return found


async def wait_for(
    condition: Callable[[], bool], timeout: float, what: str, every: float = 0.1
) -> None:
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(condition):
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
        await asyncio.sleep(every)


def terminal(store: SqsJobStore, endpoint: str, ids: Iterable[str]) -> Callable[[], bool]:
    wanted = set(ids)

    def check() -> bool:
        records = table_records(store, endpoint)
        return all(
            job_id in records and records[job_id].status in (JobStatus.COMPLETED, JobStatus.DEAD)
            for job_id in wanted
        )

    return check


def dlq_job_ids(store: SqsJobStore, endpoint: str) -> Counter[str]:
    sqs = boto3.client("sqs", endpoint_url=endpoint, config=OBSERVER_CONFIG)
    found: Counter[str] = Counter()
    try:
        url = store.dead_letter_queue_urls["default"]
        while messages := sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=30
        ).get("Messages", []):
            found.update(stored_id(m["Body"]) for m in messages)
    finally:
        sqs.close()
    return found


def stored_id(body: str) -> str:
    return str(json.loads(body)["id"])


# -- every first attempt fails ------------------------------------------------------------


@pytest.mark.slow
async def test_every_first_attempt_fails_and_each_outcome_is_recorded_once(
    faulty_aws: FaultyAws, capsys: pytest.CaptureFixture[str]
) -> None:
    endpoint, injector = faulty_aws.endpoint, faulty_aws.injector
    store = fresh_store(endpoint)
    store.sync.describe("default")
    producer, sync_producer = JobQueue(store), SyncJobQueue(store)
    ledger = Ledger()
    results: list[EnqueueResult] = []
    plan = FaultPlan(seed=7, first_attempts=True)
    try:
        async with workers(store, endpoint, ledger, count=1, concurrency=4):
            injector.start(plan)
            results.append(await producer.enqueue("ok", 1, lease=LEASE))
            results.append(await asyncio.to_thread(sync_producer.enqueue, "ok", 2, lease=LEASE))
            results.append(await producer.enqueue("ok", 3, idempotency_key="k3", lease=LEASE))
            again = await producer.enqueue("ok", 3, idempotency_key="k3", lease=LEASE)
            results += await producer.enqueue_many(
                [
                    EnqueueRequest("ok", 4, lease=LEASE),
                    EnqueueRequest("ok", 5, idempotency_key="k5", lease=LEASE),
                    EnqueueRequest("ok", 5, idempotency_key="k5", lease=LEASE),
                    EnqueueRequest("flaky", 6, lease=LEASE),
                    EnqueueRequest("fatal", 7, lease=LEASE, max_attempts=1),
                ]
            )
            ids = {r.job.id for r in results}
            await wait_for(
                lambda: len(ledger.completed) + len(ledger.dead) == len(ids),
                60,
                "every job to finish",
            )
            injector.stop()
        summary = injector.summary()
    finally:
        injector.stop()
        await store.aclose()
    with capsys.disabled():  # the figures belong in every run's output, not only failures
        print(f"\nevery first attempt: {summary}")
    assert [r.duplicate for r in results] == [False, False, False, False, False, True, False, False]
    assert (again.duplicate, again.job.id) == (True, results[2].job.id)
    unique = {r.job.id: r.job for r in results}
    records = table_records(store, endpoint)
    assert sorted(records) == sorted(unique)  # nothing written twice, nothing unwritten
    fatal = next(j.id for j in unique.values() if j.name == "fatal")
    flaky = next(j.id for j in unique.values() if j.name == "flaky")
    assert {i: (r.status, r.attempts) for i, r in records.items()} == {
        job_id: (
            (JobStatus.DEAD, 1)
            if job_id == fatal
            else (JobStatus.COMPLETED, 2)
            if job_id == flaky
            else (JobStatus.COMPLETED, 1)
        )
        for job_id in unique
    }
    assert ledger.runs == {i: 2 if i == flaky else 1 for i in unique}
    assert ledger.completed == {i: 1 for i in unique if i != fatal}
    assert ledger.dead == {fatal: 1}
    assert dlq_job_ids(store, endpoint).keys() == {fatal}  # a lost send may leave two copies
    kinds = Counter(kind for (_, _, kind) in injector.injected.elements())
    assert set(kinds) == set(TRANSIENT), kinds  # each kind of transient fault was met


# -- ten percent at random ----------------------------------------------------------------


@dataclass
class Enqueued:
    returned: list[Job] = field(default_factory=list)  # the call reported success
    written: list[Job] = field(default_factory=list)  # a failed batch's results
    raised: list[BaseException] = field(default_factory=list)

    def keep(self, results: list[EnqueueResult]) -> None:
        self.returned += [r.job for r in results]


async def produce(producer: JobQueue, sync_producer: SyncJobQueue, rounds: int) -> Enqueued:
    """Ten jobs a round through each kind of producer call, keyed and not; rounds overlap
    five at a time, as concurrent producers do."""
    out = Enqueued()
    limit = asyncio.Semaphore(5)

    async def one_round(i: int) -> None:
        singles: list[Callable[[], Awaitable[EnqueueResult]]] = [
            lambda: producer.enqueue("ok", i, lease=LEASE),
            lambda: producer.enqueue("ok", i, idempotency_key=f"a{i}", lease=LEASE),
            lambda: asyncio.to_thread(sync_producer.enqueue, "ok", i, lease=LEASE),
            lambda: asyncio.to_thread(
                sync_producer.enqueue, "flaky", i, idempotency_key=f"s{i}", lease=LEASE
            ),
        ]
        batch = [EnqueueRequest("ok", f"{i}-{j}", lease=LEASE) for j in range(5)]
        batch.append(EnqueueRequest("ok", i, idempotency_key=f"m{i}", lease=LEASE))
        async with limit:
            for call in singles:
                try:
                    out.keep([await call()])
                except JobStoreError as error:
                    out.raised.append(error)
            try:
                out.keep(await producer.enqueue_many(batch))
            except JobBatchError as error:
                out.written += [r.job for r in error.results]
                out.raised.append(error)

    await asyncio.gather(*(one_round(i) for i in range(rounds)))
    return out


@pytest.mark.slow
async def test_ten_percent_faults_lose_no_job(
    faulty_aws: FaultyAws, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = int(os.environ.get("SQSJOBS_FAULT_SEED") or secrets.randbits(32))
    print(f"\nfault seed {seed} (replay with SQSJOBS_FAULT_SEED={seed})")  # shown on failure
    endpoint, injector = faulty_aws.endpoint, faulty_aws.injector
    store = fresh_store(endpoint)
    store.sync.describe("default")
    producer, sync_producer = JobQueue(store), SyncJobQueue(store)
    ledger = Ledger()
    started = time.monotonic()
    try:
        with caplog.at_level(logging.WARNING, logger="sqsjobs"):
            async with workers(store, endpoint, ledger, count=2, concurrency=8) as serving:
                injector.start(FaultPlan(rate=0.10, seed=seed))
                enqueued = await produce(producer, sync_producer, 20)
                ids = {job.id for job in enqueued.returned}
                # The hooks say when to look (a table scan costs the emulator much more).
                await wait_for(lambda: ids <= set(ledger.completed), 60, "every job to finish")
                alive = [worker.state.running for worker in serving]
                injector.stop()
                summary = injector.summary()
                if enqueued.raised:
                    # A call that raised may have left records without their messages (a
                    # batch's, or a put whose send failed): the reconciler's to repair, as
                    # in production.
                    await store.reconcile(grace=0)
                everything = terminal(store, endpoint, table_records(store, endpoint))
                await wait_for(everything, 60, "every record to finish", every=0.5)
    finally:
        injector.stop()
        await store.aclose()
    wall = time.monotonic() - started
    logged = Counter(str(getattr(r, "event", r.name)) for r in caplog.records)
    # Runs beyond one per job, and beyond two for the jobs that fail their first attempt.
    records = table_records(store, endpoint)
    planned = {i: 2 if job.name == "flaky" else 1 for i, job in records.items()}
    extra = sum(max(0, runs - planned[job_id]) for job_id, runs in ledger.runs.items())
    with capsys.disabled():
        print(
            f"\n10% faults, seed {seed}: {summary}; {len(enqueued.returned)} jobs returned "
            f"by enqueues, {len(enqueued.raised)} enqueue calls raised; {extra} unplanned "
            f"extra runs; logged {dict(logged)}; {wall:.1f}s wall time"
        )
    codes = [e.code for e in enqueued.raised if isinstance(e, JobStoreError)]
    assert "ConditionalCheckFailedException" not in codes, "a put refused its own write"
    missing = {job.id for job in enqueued.returned + enqueued.written} - set(records)
    assert not missing, f"seed {seed}: enqueues returned jobs that were never written"
    statuses = Counter(job.status for job in records.values())
    assert statuses == {JobStatus.COMPLETED: len(records)}, f"seed {seed}: {statuses}"
    assert alive == [True, True], "a worker stopped serving"
    assert set(ledger.runs) == set(records)  # every job ran


# -- every try fails ----------------------------------------------------------------------


def one_retry(self: Endpoint) -> dict[str, Any]:
    """The store's client options with one retry instead of five (the same outcome when
    every try fails, a fifteenth of the backoff)."""
    return {**ENDPOINT_OPTIONS(self), "retries": {"mode": "standard", "max_attempts": 1}}


ENDPOINT_OPTIONS = Endpoint.client_options


async def test_when_every_try_fails_enqueue_raises_and_the_reconciler_repairs_the_rest(
    faulty_aws: FaultyAws, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(Endpoint, "client_options", one_retry)
    endpoint, injector = faulty_aws.endpoint, faulty_aws.injector
    store = fresh_store(endpoint)
    store.sync.describe("default")
    producer = JobQueue(store)
    ledger = Ledger()
    before, after = (Fault.THROTTLE, Fault.SERVER_ERROR, Fault.DROP), (Fault.LOST_RESPONSE,)
    cases = {  # what fails on every try -> is the record written?
        "put refused": (FaultPlan(rate=1.0, kinds=before, actions=PUT), False),
        "put applied, answer lost": (FaultPlan(rate=1.0, kinds=after, actions=PUT), True),
        "send refused": (FaultPlan(rate=1.0, kinds=before, actions=SEND), True),
        "send applied, answer lost": (FaultPlan(rate=1.0, kinds=after, actions=SEND), True),
    }
    raised: dict[str, str] = {}
    try:
        async with workers(store, endpoint, ledger, count=1, concurrency=4):
            for case, (plan, _) in cases.items():
                with injector.faults(plan), pytest.raises(JobStoreError) as e:
                    await producer.enqueue("ok", case, lease=LEASE)
                assert isinstance(e.value.__cause__, ClientError | BotoCoreError)
                raised[case] = f"{e.value.code} ({type(e.value.__cause__).__name__})"
            assert sorted(j.payload for j in table_records(store, endpoint).values()) == sorted(
                case for case, (_, written) in cases.items() if written
            )
            # The records whose send failed have no message: the reconciler sends one.
            report = await store.reconcile(grace=0)
            records = table_records(store, endpoint)
            await wait_for(terminal(store, endpoint, records), 30, "the written jobs")
    finally:
        await store.aclose()
    with capsys.disabled():
        print(f"\nevery try fails: {raised}; reconciler re-sent {report.resent}")
    assert report.resent == 2  # put applied + answer lost, send refused
    final = table_records(store, endpoint)
    assert {j.payload: j.status for j in final.values()} == {
        case: JobStatus.COMPLETED for case, (_, written) in cases.items() if written
    }
    assert ledger.runs == {job_id: 1 for job_id in final}  # a second message ran nothing
