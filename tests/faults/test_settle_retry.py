"""A worker's completion throttled past botocore's retries is tried again, not lost.

The table throttles the completion's ``UpdateItem`` for more tries than botocore makes,
then recovers. The worker must try the same write again (its lease held meanwhile), so
a job on its final attempt completes once, never to be dead-lettered by the next claim
as "lease expired after final attempt". The store's clients make two tries here instead
of six (five retries) only so that botocore gives up within a second, not fifteen.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import pytest

from sqsjobs import Backoff, JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.transports.endpoint import Endpoint

from .conftest import FaultyAws
from .faulty_aws import Fault, FaultPlan

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
