"""Every AWS failure at every step of a job's life: the matrix (``matrix``).

Each cell runs one job on a fresh store behind the fault layer, with one step failing in
one way for one duration, then lets the store recover and drives the job to its end: a
second worker, and the reconciler re-sending what is owed. What must hold in every cell:

- a handler's success is never recorded as a failure or dead;
- the job ends in exactly one recorded outcome, the one its handler called for, and a
  dead job's copy reaches the dead-letter queue;
- it ran at most once more than its attempts needed (the at-least-once re-run the
  README allows when a lease is lost);
- no exception outside the ``JobError`` hierarchy reaches a caller, and no task of the
  worker dies with one;
- when the failure outlasted the SDK's retries in a worker, its log said so (WARNING).

One exception, checked for what it is (``applied_after_stop``): a claim write the table
applies after its claimer timed out, undid it and stopped leaves a lease nobody knows;
on a final attempt the next claim dead-letters that job, which never ran.

The store's clients make two tries per call (not botocore's five), so a failure reaches
sqsjobs' own handling within seconds. Leases are 3 s. The whole matrix runs in CI
(``--all``); ``SLICE`` (one failure of each family on every step) runs in the fast tier.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.config import Config

from sqsjobs import (
    Backoff,
    Job,
    JobContext,
    JobError,
    JobFatalError,
    JobQueue,
    JobStatus,
    JobWorker,
    SyncJobQueue,
)
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_cron_handler, make_lambda_handler
from sqsjobs.core.lifecycle import LEASE_EXPIRED_ERROR
from sqsjobs.cron.schedule import Cron

from .conftest import FaultyAws
from .faulty_aws import OBSERVER_CONFIG, Fault
from .matrix import (
    FAILURES,
    STEPS,
    ClientFaults,
    Duration,
    Failure,
    Kind,
    Step,
    durations,
    plan,
)
from .test_faults import table_records, twin, visible_after_a_lease, warm_up

LEASE = 3.0
READ_TIMEOUT = 2.0  # a SLOW reply (3 s) is a read timeout
SLOW_REPLY = 3.0
SETTLE_TIMEOUT = 60.0
# Failed requests of one step that certainly include a call whose tries (two) all failed:
# the requests of a step are made one after another.
OUTLASTED = 3
FINAL = {
    "ok": JobStatus.COMPLETED,
    "slow": JobStatus.COMPLETED,
    "flaky": JobStatus.COMPLETED,
    "fatal": JobStatus.DEAD,
}
RUNS_NEEDED = {"ok": 1, "slow": 1, "flaky": 2, "fatal": 1}
# Each job has the attempts it needs and no more: a success on its final attempt is what
# a lost outcome write would turn into a dead job.
MAX_ATTEMPTS = RUNS_NEEDED


# Cells where the matrix found holes, kept in the fast tier besides the slice.
FOUND = {
    "claim-lost-response-until-stop",
    "completion-ConditionalCheckFailed-blip",
    "heartbeat-ConditionalCheckFailed-blip",
    "lambda-completion-throttling-until-stop",
}


def in_slice(step: int, failure: int, duration: int) -> bool:
    """The fast tier's slice: every step once, the failures and durations in turn."""
    return failure == (step * 4) % len(FAILURES) and duration == step % 2


def cells() -> Iterator[Any]:
    for s, step in enumerate(STEPS):
        for f, failure in enumerate(FAILURES):
            for d, duration in enumerate(durations(step)):
                name = f"{step}-{failure}-{duration}"
                fast = in_slice(s, f, d) or name in FOUND
                marks = () if fast else (pytest.mark.slow,)
                yield pytest.param(step, failure, duration, id=name, marks=marks)


@dataclass
class Ledger:
    """What handlers and hooks saw of the cell's job."""

    runs: Counter[str] = field(default_factory=Counter)
    completed: int = 0
    failed: list[bool] = field(default_factory=list)  # will_retry of each on_fail
    dead: int = 0

    def handlers(self) -> dict[str, Any]:
        async def ok(ctx: JobContext) -> str:
            self.runs[ctx.job.id] += 1
            return f"sent to {ctx.payload['to']}"

        async def slow(ctx: JobContext) -> str:
            self.runs[ctx.job.id] += 1
            await asyncio.sleep(LEASE * 0.9)  # two heartbeats
            return "slow and done"

        async def flaky(ctx: JobContext) -> str:
            self.runs[ctx.job.id] += 1
            if ctx.attempt == 1:
                raise ConnectionResetError("smtp.example.org reset the connection")
            return "sent on the second try"

        async def fatal(ctx: JobContext) -> None:
            self.runs[ctx.job.id] += 1
            raise JobFatalError("the mailbox zoë@example.org does not exist")

        return {"ok": ok, "slow": slow, "flaky": flaky, "fatal": fatal}

    def hooks(self) -> dict[str, Any]:
        def on_complete(job: Job) -> None:
            self.completed += 1

        def on_fail(job: Job, error: BaseException, will_retry: bool, delay: Any) -> None:
            self.failed.append(will_retry)

        def on_dead(job: Job, error: BaseException) -> None:
            self.dead += 1

        return {"on_complete": on_complete, "on_fail": on_fail, "on_dead": on_dead}


@dataclass
class Cell:
    faulty: FaultyAws
    step: Step
    failure: Failure
    duration: Duration
    client_faults: ClientFaults
    store: SqsJobStore
    ledger: Ledger = field(default_factory=Ledger)
    escaped: list[BaseException] = field(default_factory=list)  # what reached a caller

    def faults_on(self) -> None:
        if self.failure.client is not None:
            self.client_faults.start(self.failure, self.step, self.duration)
        else:
            self.faulty.injector.start(plan(self.failure, self.step, self.duration, SLOW_REPLY))

    def faults_off(self) -> None:
        self.client_faults.stop()
        self.faulty.injector.stop()

    def caught(self, error: BaseException) -> None:
        """A caller got ``error``: only the ``JobError`` hierarchy may reach one."""
        if not isinstance(error, JobError):
            self.escaped.append(error)

    def worker(self, store: SqsJobStore | None = None) -> JobWorker:
        queue = JobQueue(store or self.store, backoff=ONE_SECOND)
        return JobWorker(queue, self.ledger.handlers(), **self.ledger.hooks())


ONE_SECOND = Backoff(base=1.0, max=1.0, random=lambda: 1.0)


def make_store(faulty: FaultyAws, client_faults: ClientFaults) -> SqsJobStore:
    import aiobotocore.session

    session = boto3.Session()
    aio_session = aiobotocore.session.get_session()
    client_faults.attach(session._session)
    client_faults.attach(aio_session)
    made = SqsJobStore.create(f"m{uuid.uuid4().hex[:12]}", endpoint_url=faulty.endpoint)
    made.close()  # made with the SDK's patient defaults: a table takes its time
    # A message whose claim failed comes back within a lease, where the claimer can still
    # undo a claim that got no answer (``flows.unanswered``).
    visible_after_a_lease(made, faulty.endpoint, LEASE)
    return SqsJobStore(
        table_name=made.table_name,
        queue_urls=made.queue_urls,
        dead_letter_queue_urls=made.dead_letter_queue_urls,
        endpoint_url=faulty.endpoint,
        wait_time=1.0,
        max_attempts=2,
        session=session,
        aio_session=aio_session,
        config=Config(read_timeout=READ_TIMEOUT, connect_timeout=2.0),
    )


@pytest.mark.parametrize(("step", "failure", "duration"), list(cells()))
async def test_the_matrix(
    faulty_aws: FaultyAws,
    caplog: pytest.LogCaptureFixture,
    step: Step,
    failure: Failure,
    duration: Duration,
) -> None:
    client_faults = ClientFaults()
    store = make_store(faulty_aws, client_faults)
    cell = Cell(faulty_aws, step, failure, duration, client_faults, store)
    loop_errors: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: loop_errors.append(context))
    try:
        await warm_up(store)
        with caplog.at_level(logging.INFO, logger="sqsjobs"):
            job_ids = await RUNNERS[step.kind](cell)
            warned = any(
                r.levelno >= logging.WARNING and r.name.startswith("sqsjobs")
                for r in caplog.records
            )
            faults = faulty_aws.injector.injected.total() + client_faults.raised
            await settle(cell, job_ids)
    finally:
        cell.faults_off()
        await store.aclose()
    check(cell, job_ids, warned if faults >= OUTLASTED else None, loop_errors)


def check(cell: Cell, job_ids: list[str], warned: bool | None, loop_errors: list[Any]) -> None:
    """The invariants; ``warned`` is None when the SDK's own tries may have absorbed the
    failure (fewer than ``OUTLASTED`` requests failed)."""
    records = table_records(cell.store, cell.faulty.endpoint)
    ledger, job = cell.ledger, cell.step.job
    assert not cell.escaped, f"outside the JobError hierarchy: {cell.escaped!r}"
    assert not [c for c in loop_errors if "exception" in c], loop_errors
    if applied_after_stop(cell, records, job_ids):
        return
    for job_id in job_ids:
        assert records[job_id].status is FINAL[job], records[job_id]
    if not job_ids:
        return
    for job_id in job_ids:
        runs = ledger.runs[job_id]
        assert 1 <= runs <= RUNS_NEEDED[job] + 1, f"{job_id} ran {runs} times"
    if FINAL[job] is JobStatus.COMPLETED:
        assert ledger.dead == 0 and False not in ledger.failed, "a success recorded as failed"
        assert ledger.completed <= len(job_ids)
    else:
        assert ledger.completed == 0 and ledger.dead <= 1
    if warned is not None and cell.step.kind is Kind.WORKER:
        assert warned, "the worker's log said nothing of a failure that outlasted the SDK"


def applied_after_stop(cell: Cell, records: dict[str, Job], job_ids: list[str]) -> bool:
    """The one way a job may end dead without its handler failing: a claim write that the
    table applied after its claimer had given it up (a read timeout) and undone it, and
    after that claimer stopped, so nobody knew the lease. The next claim finds the lease
    over on the final attempt and dead-letters the job, as the lease rule says, without a
    run. Only a claim step, timing out, until the stop; the job must not have run."""
    if (cell.failure.fault, cell.duration) != (Fault.SLOW, Duration.UNTIL_STOP):
        return False
    if cell.step.name not in ("claim", "lambda-claim"):
        return False
    ended = [records[job_id] for job_id in job_ids]
    dead = [job for job in ended if job.status is JobStatus.DEAD]
    if not dead:
        return False
    assert all(job.last_error == LEASE_EXPIRED_ERROR for job in dead), dead
    assert all(cell.ledger.runs[job.id] == 0 for job in dead), "dead after a run"
    return True


async def settle(cell: Cell, job_ids: list[str]) -> None:
    """Healthy again: a second worker and the reconciler drive every job to its end."""
    cell.faults_off()
    other = twin(cell.store, cell.faulty.endpoint)
    worker = cell.worker(other)
    worker.start()
    try:
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while not done(cell, job_ids):
            assert time.monotonic() < deadline, (
                f"not settled: {table_records(cell.store, cell.faulty.endpoint)}"
            )
            await other.reconcile(grace=LEASE)
            await asyncio.sleep(0.5)
    finally:
        await worker.stop(grace=10)
        await other.aclose()


def done(cell: Cell, job_ids: list[str]) -> bool:
    records = table_records(cell.store, cell.faulty.endpoint)
    ended = all(
        job_id in records and records[job_id].status in (JobStatus.COMPLETED, JobStatus.DEAD)
        for job_id in job_ids
    )
    if not ended or cell.step.job != "fatal":
        return ended
    return dead_letter_depth(cell) >= len(job_ids)


def dead_letter_depth(cell: Cell) -> int:
    """Messages in the cell's DLQ, visible or not: copies of its dead job (moto counts
    exactly; a receive would hide them)."""
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    sqs = boto3.client("sqs", endpoint_url=cell.faulty.endpoint, config=OBSERVER_CONFIG)
    try:
        url = cell.store.dead_letter_queue_urls["default"]
        found = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    finally:
        sqs.close()
    return sum(int(found[name]) for name in names)


# -- the runners: one per kind of caller -------------------------------------------------


async def enqueue(cell: Cell, queue: JobQueue) -> str:
    job = cell.step.job
    payload = {"to": "zoë@example.org"}
    return (await queue.enqueue(job, payload, lease=LEASE, max_attempts=MAX_ATTEMPTS[job])).job.id


async def run_worker(cell: Cell) -> list[str]:
    job_id = await enqueue(cell, JobQueue(cell.store))
    worker = cell.worker()
    cell.faults_on()
    worker.start()
    try:
        if cell.duration is Duration.BLIP:
            await wait_until(lambda: done(cell, [job_id]), LEASE * 4)
        else:
            await asyncio.sleep(LEASE * 1.5)
            if cell.duration is Duration.BEYOND_LEASE:
                cell.faults_off()
                await wait_until(lambda: done(cell, [job_id]), LEASE * 4)
    finally:
        try:
            await worker.stop(grace=LEASE)
        except BaseException as error:
            cell.caught(error)
    return [job_id]


async def wait_until(condition: Any, timeout: float) -> None:
    for _ in range(int(timeout / 0.2)):
        if await asyncio.to_thread(condition):
            return
        await asyncio.sleep(0.2)


async def run_producer(cell: Cell) -> list[str]:
    cell.faults_on()
    for face in ("async", "blocking"):
        try:
            if face == "async":
                await enqueue(cell, JobQueue(cell.store))
            else:
                sync = SyncJobQueue(cell.store)
                await asyncio.to_thread(
                    sync.enqueue, "ok", {"to": "zoë@example.org"}, lease=LEASE, max_attempts=1
                )
        except BaseException as error:
            cell.caught(error)
    cell.faults_off()
    return list(table_records(cell.store, cell.faulty.endpoint))


async def run_lambda(cell: Cell) -> list[str]:
    job_id = await enqueue(cell, JobQueue(cell.store))
    handler = make_lambda_handler(
        cell.ledger.handlers(), store=cell.store, backoff=ONE_SECOND, **cell.ledger.hooks()
    )
    event = await asyncio.to_thread(lambda_event, cell)
    cell.faults_on()
    try:
        await asyncio.to_thread(handler, event, Deadline(LEASE * 2))
    except BaseException as error:
        cell.caught(error)
    cell.faults_off()
    return [job_id]


@dataclass
class Deadline:
    seconds: float
    start: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        return int((self.seconds - (time.monotonic() - self.start)) * 1000) + 3000


def lambda_event(cell: Cell) -> dict[str, Any]:
    sqs = boto3.client("sqs", endpoint_url=cell.faulty.endpoint, config=OBSERVER_CONFIG)
    url = cell.store.queue_urls["default"]
    try:
        messages: list[dict[str, Any]] = []
        while not messages:
            reply = sqs.receive_message(
                QueueUrl=url, WaitTimeSeconds=1, AttributeNames=["All"], VisibilityTimeout=30
            )
            messages = reply.get("Messages", [])
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    finally:
        sqs.close()
    queue_arn = arn["Attributes"]["QueueArn"]
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": {},
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": "us-east-1",
            }
            for m in messages
        ]
    }


async def run_reconciler(cell: Cell) -> list[str]:
    """A job whose message was lost: only the reconciler brings it back."""
    job_id = await enqueue(cell, JobQueue(cell.store))
    sqs = boto3.client("sqs", endpoint_url=cell.faulty.endpoint, config=OBSERVER_CONFIG)
    try:
        sqs.purge_queue(QueueUrl=cell.store.queue_urls["default"])
    finally:
        sqs.close()
    await asyncio.sleep(LEASE)  # older than the reconciler's grace below
    cell.faults_on()
    try:
        await cell.store.reconcile(grace=LEASE)
    except BaseException as error:
        cell.caught(error)
    cell.faults_off()
    return [job_id]


async def run_cron(cell: Cell) -> list[str]:
    options = {"max_attempts": 1, "lease": LEASE}
    crons = [Cron("* * * * *", "ok", payload={"to": "zoë@example.org"}, options=options)]
    handler = make_cron_handler(store=cell.store, crons=crons)
    event = {"time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    cell.faults_on()
    try:
        await asyncio.to_thread(handler, event, None)
    except BaseException as error:
        cell.caught(error)
    cell.faults_off()
    await asyncio.to_thread(handler, event, None)  # the next minute's invocation, healthy
    return list(table_records(cell.store, cell.faulty.endpoint))


RUNNERS = {
    Kind.WORKER: run_worker,
    Kind.PRODUCER: run_producer,
    Kind.LAMBDA: run_lambda,
    Kind.RECONCILER: run_reconciler,
    Kind.CRON: run_cron,
}


def test_the_matrix_covers_every_failure_on_every_step() -> None:
    counted = Counter((p.values[0].kind, len(p.marks) == 0) for p in cells())
    assert sum(counted.values()) == sum(len(durations(s)) for s in STEPS) * len(FAILURES)
    assert {kind for kind, _ in counted} == set(Kind)
