"""The Lambda handler records an outcome through a throttled table, as a worker does.

The run is the worker's (``sqsjobs._run``): a completion whose store call raises is
tried again while the lease holds, and the invocation deadline bounds the tries, so
the handler still answers Lambda in time.
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


class ThrottledCompletions(SqsJobStore):
    """``complete`` raises as botocore does once its retries are spent, ``throttled`` times."""

    throttled = 0
    tries: list[tuple[str, str, float, Any]]

    async def complete(self, job_id: str, lease_token: str, now: float, result: Any) -> bool:
        self.tries.append((job_id, lease_token, now, result))
        if len(self.tries) <= self.throttled:
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


@pytest.fixture
def throttled(aws_endpoint: str) -> Any:
    made = ThrottledCompletions.create(
        unique_prefix(), max_receive_count=5, endpoint_url=aws_endpoint
    )
    assert isinstance(made, ThrottledCompletions)
    made.tries = []
    yield made
    made.close()


def test_a_completion_throttled_at_first_is_recorded_and_not_reported(
    throttled: ThrottledCompletions, sqs: Any
) -> None:
    throttled.throttled = 2
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
    assert len(throttled.tries) == 3 and all(t == throttled.tries[0] for t in throttled.tries)


def test_a_completion_throttled_past_the_deadline_is_reported_and_left_to_the_lease(
    throttled: ThrottledCompletions, sqs: Any, caplog: pytest.LogCaptureFixture
) -> None:
    throttled.throttled = 1_000
    queue = SyncJobQueue(throttled)
    job = queue.enqueue("pdf.stamp", {"tenant": "göteborg-3"}, max_attempts=3).job
    handler = make_lambda_handler(
        {"pdf.stamp": lambda ctx: "stamped"}, store=throttled, safety_margin=1.0
    )
    event = receive_event(sqs, throttled.queue_urls["default"], 1)
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        reply = handler(event, Context(remaining_ms=2_400))
    assert time.monotonic() - started < 2.4
    assert reply == {"batchItemFailures": [{"itemIdentifier": event["Records"][0]["messageId"]}]}
    held = queue.get(job.id)
    assert held is not None and (held.status, held.attempts) == (JobStatus.RUNNING, 1)
    assert len(throttled.tries) >= 2
    [gave_up] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert gave_up.getMessage().startswith(
        f"Could not record the completion of job 'pdf.stamp' ({job.id}) before the invocation "
        "deadline: ClientError: "
    )
    assert gave_up.getMessage().endswith(
        "; the next claim after its lease runs it again (this was attempt 1 of 3)"
    )
