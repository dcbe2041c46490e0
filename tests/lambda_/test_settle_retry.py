"""The Lambda handler records an outcome through a throttled table, as a worker does.

The run is the worker's (``sqsjobs.worker.run``): a completion whose store call raises is
tried again, heartbeats holding the lease however many leases that takes, and the
invocation's remaining time (less the safety margin) bounds the tries, so the handler
still answers Lambda in time. An outcome left unrecorded at the deadline is reported in
``batchItemFailures``: the message comes back after its visibility and the next claim
has the job.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sqsjobs import JobContext, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler

from ..aws.emulator import unique_prefix
from .conftest import Context, receive_event

LEASE = 1.2
# How long completions are refused: more than three leases, on the monotonic clock from
# the first try (not counted in heartbeats: on a loaded machine, a heartbeat that comes
# after the lease lapsed is refused, the tries go on unheld and no more beats come).
THROTTLED_FOR = 3 * LEASE + 0.2


class Throttling:
    """What the store copies share (the Lambda handler runs on a copy of the store)."""

    def __init__(self) -> None:
        self.throttled = 0  # completions refused, counted from the first
        self.for_seconds: float | None = None  # else: refused this long from the first try
        self.first_try: float | None = None
        self.tries: list[tuple[str, str, float, Any]] = []
        self.beats: list[bool] = []

    def refuses(self) -> bool:
        if self.for_seconds is not None:
            now = time.monotonic()
            self.first_try = now if self.first_try is None else self.first_try
            return now - self.first_try < self.for_seconds
        return len(self.tries) <= self.throttled


class ThrottledCompletions(SqsJobStore):
    """``complete`` raises as botocore does once its retries are spent, as ``throttling``
    says; heartbeats are recorded."""

    throttling: Throttling

    async def complete(self, job_id: str, lease_token: str, now: float, result: Any) -> bool:
        self.throttling.tries.append((job_id, lease_token, now, result))
        if self.throttling.refuses():
            raise ClientError(
                {
                    "Error": {
                        "Code": "ProvisionedThroughputExceededException",
                        "Message": "The level of configured provisioned throughput "
                        "for the table was exceeded.",
                    }
                },
                "UpdateItem",
            )
        return await super().complete(job_id, lease_token, now, result)

    async def heartbeat(
        self, job_id: str, lease_token: str, lease_until: float, now: float
    ) -> bool:
        held = await super().heartbeat(job_id, lease_token, lease_until, now)
        self.throttling.beats.append(held)
        return held


@pytest.fixture
def throttled(aws_endpoint: str) -> Any:
    made = ThrottledCompletions.create(
        unique_prefix(), max_receive_count=5, endpoint_url=aws_endpoint
    )
    assert isinstance(made, ThrottledCompletions)
    made.throttling = Throttling()
    yield made
    made.close()


def test_a_completion_throttled_at_first_is_recorded_and_not_reported(
    throttled: ThrottledCompletions, sqs: Any
) -> None:
    throttled.throttling.throttled = 2
    queue = SyncJobQueue(throttled)
    job = queue.enqueue("pdf.stamp", {"tenant": "göteborg-3"}, max_attempts=1).job
    runs: list[int] = []

    async def stamp(ctx: JobContext) -> str:
        runs.append(ctx.attempt)
        return "stamped"

    completed: list[str] = []
    handler = make_lambda_handler(
        {"pdf.stamp": stamp}, store=throttled, on_complete=lambda j: completed.append(j.id)
    )
    event = receive_event(sqs, throttled.queue_urls["default"], 1)
    assert handler(event, Context()) == {"batchItemFailures": []}
    done = queue.get(job.id)
    assert done is not None
    assert (done.status, done.attempts, done.result) == (JobStatus.COMPLETED, 1, "stamped")
    assert runs == [1] and completed == [job.id]
    tries = throttled.throttling.tries
    assert len(tries) == 3 and all(t == tries[0] for t in tries)


@pytest.mark.parametrize("kind", ["async", "sync"])
def test_a_completion_throttled_for_three_leases_within_the_time_left_completes(
    throttled: ThrottledCompletions, sqs: Any, kind: str
) -> None:
    throttled.throttling.for_seconds = THROTTLED_FOR
    queue = SyncJobQueue(throttled)
    job = queue.enqueue("pdf.stamp", {"tenant": "tromsø-1"}, max_attempts=1, lease=LEASE).job

    def stamp(ctx: JobContext) -> str:
        return f"stamped for {ctx.payload['tenant']}"

    async def stamp_async(ctx: JobContext) -> str:
        return stamp(ctx)

    handler = make_lambda_handler(
        {"pdf.stamp": stamp if kind == "sync" else stamp_async}, store=throttled
    )
    event = receive_event(sqs, throttled.queue_urls["default"], 1)
    assert handler(event, Context(remaining_ms=60_000)) == {"batchItemFailures": []}
    done = queue.get(job.id)
    assert done is not None
    assert (done.status, done.attempts, done.result) == (
        JobStatus.COMPLETED,
        1,
        "stamped for tromsø-1",
    )
    # Heartbeats went on through the throttling (on a loaded machine one may come after
    # the lease lapsed: the record, still under this run's token, takes the write all
    # the same, and no other claim ran it: one attempt).
    assert throttled.throttling.beats[:1] == [True]
    assert len(throttled.throttling.tries) > 1


def test_a_completion_throttled_past_the_deadline_is_reported_and_runs_again_later(
    throttled: ThrottledCompletions, sqs: Any, caplog: pytest.LogCaptureFixture
) -> None:
    throttled.throttling.throttled = 1_000_000
    queue = SyncJobQueue(throttled)
    job = queue.enqueue("pdf.stamp", {"tenant": "göteborg-3"}, max_attempts=3, lease=2.0).job
    handler = make_lambda_handler(
        {"pdf.stamp": lambda ctx: f"stamped, attempt {ctx.attempt}"},
        store=throttled,
        safety_margin=1.0,
    )
    url = throttled.queue_urls["default"]
    event = receive_event(sqs, url, 1)
    # 4 s to the deadline once the margin is off: the handler (instant) is long done when
    # it comes, even on a loaded machine, so what the deadline finds is the pending write.
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        reply = handler(event, Context(remaining_ms=5_000))
    assert reply == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    released = queue.get(job.id)  # released at the deadline: queued, the attempt not counted
    assert released is not None
    assert (released.status, released.attempts) == (JobStatus.QUEUED, 0)
    assert released.last_error == "invocation deadline reached"
    assert len(throttled.throttling.tries) >= 2
    assert [r for r in caplog.records if r.levelno == logging.ERROR] == []
    [note] = [r for r in caplog.records if r.__dict__.get("event") == "jobs.released"]
    assert note.getMessage().startswith(
        f"Released job 'pdf.stamp' ({job.id}) back to its queue: invocation deadline reached; "
        "its completion was not recorded within the invocation (ClientError: "
    )
    assert note.getMessage().endswith("so it runs again, this attempt not counted")
    throttled.throttling.throttled = 0  # the table recovers; the message comes back
    throttled.throttling.tries.clear()
    for _ in range(5):  # a receive may come while the lease is still held: hidden again
        again = receive_event(sqs, url, 1)
        handler(again, Context())
        done = queue.get(job.id)
        assert done is not None
        if done.status is JobStatus.COMPLETED:
            break
    assert (done.status, done.attempts, done.result) == (
        JobStatus.COMPLETED,
        1,
        "stamped, attempt 1",
    )
