"""Pure tests: a request that got no response at all, retries spent, is an ``AwsError``.

botocore raises ``ConnectionClosedError``/``EndpointConnectionError`` (not a
``ClientError``) when a connection drops or cannot be made. The flows handle AWS
failures as ``AwsError``: a batch reports what it wrote, a failed SQS call after a
record was settled is left to come back on its own, one failed claim write does not
abandon the others. So both transports must translate these too.
"""

from __future__ import annotations

import contextlib
from typing import Any, NoReturn

import pytest
from botocore.exceptions import ConnectionClosedError, EndpointConnectionError

from sqsjobs import JobBatchError, JobStatus, JobStoreError
from sqsjobs.aws.flows import claim as _claim
from sqsjobs.aws.flows import put as _flows
from sqsjobs.aws.transports.aio import AioTransport
from sqsjobs.aws.transports.boto import BotoTransport
from sqsjobs.aws.transports.endpoint import Endpoint
from sqsjobs.aws.transports.errors import no_response
from sqsjobs.aws.wire import sqs as _sqs
from sqsjobs.aws.wire.protocol import AwsError, Call, drive
from tests.aws.fakes import NOW, FakeAws, layout, prepared, stored

DROPPED = ConnectionClosedError(endpoint_url="http://127.0.0.1:9")
UNREACHABLE = EndpointConnectionError(endpoint_url="http://127.0.0.1:9")


class Unanswered:
    """A botocore client whose every request goes unanswered."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __getattr__(self, operation: str) -> Any:
        def call(**params: Any) -> NoReturn:
            raise self.error

        return call


class AsyncUnanswered(Unanswered):
    def __getattr__(self, operation: str) -> Any:
        async def call(**params: Any) -> NoReturn:
            raise self.error

        return call


@pytest.mark.parametrize("error", [DROPPED, UNREACHABLE])
def test_the_boto3_transport_raises_aws_errors_for_unanswered_requests(error: Exception) -> None:
    transport = BotoTransport(Endpoint("http://127.0.0.1:9"))
    transport._clients["sqs"] = Unanswered(error)
    with pytest.raises(AwsError) as caught:
        transport(Call("sqs", "send_message", {}))
    assert (caught.value.code, caught.value.cause) == (type(error).__name__, error)


class AsyncUnansweredTransport(AioTransport):
    def _open(self, service: Any) -> Any:
        return contextlib.nullcontext(AsyncUnanswered(DROPPED))


async def test_the_asyncio_transport_raises_aws_errors_for_unanswered_requests() -> None:
    transport = AsyncUnansweredTransport(Endpoint("http://127.0.0.1:9"))
    with pytest.raises(AwsError) as caught:
        await transport(Call("dynamodb", "update_item", {}))
    assert caught.value.cause is DROPPED
    await transport.aclose()


def test_put_many_reports_what_it_wrote_when_a_send_goes_unanswered() -> None:
    items = [(prepared(i).job, None) for i in range(12)]
    aws = FakeAws(send_message_batch=[{}, no_response(DROPPED, "send_message_batch")])
    with pytest.raises(JobBatchError) as caught:
        drive(_flows.put_many(layout(), items, NOW), aws)
    # Every record was written (the reconciler sends the last two messages).
    assert [r.job.payload for r in caught.value.results] == list(range(12))
    # Callers see a JobStoreError, botocore's own error as its cause.
    store_error = caught.value.__cause__
    assert isinstance(store_error, JobStoreError) and store_error.__cause__ is DROPPED
    assert (store_error.operation, store_error.retryable) == ("SendMessageBatch", True)


def test_one_unanswered_claim_write_does_not_abandon_the_others() -> None:
    jobs = [prepared(i).job for i in range(2)]
    running = stored(jobs[1], status=JobStatus.RUNNING, attempts=1, lease_token="t")
    aws = FakeAws(update_item=[no_response(DROPPED, "update_item"), {"Attributes": running}])
    messages = [
        _sqs.Message(f"m-{i}", f"h-{i}", _sqs.body(job.id, "default"), 1, NOW)
        for i, job in enumerate(jobs)
    ]
    claimed = drive(_claim.claim_received(layout(), "default", messages, "w", NOW), aws)
    assert [d.job.id for d in claimed.deliveries] == [jobs[1].id]
    assert [e.cause for e in claimed.errors] == [DROPPED]
