"""Every public call of ``SqsJobStore`` reports an AWS failure as a ``JobStoreError``.

The fault layer refuses every request (``AccessDenied``, what a missing IAM permission
gives), answers 500s, or throttles, and each public method, on both faces, raises a
``JobStoreError`` naming the AWS operation and code, saying whether a later try may pass,
with botocore's error as its cause: never a bare ``ClientError``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sqsjobs import JobFilter, JobQueue, JobStoreError, JobStoreThrottledError, SyncJobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import FaultyAws
from .faulty_aws import Fault, FaultPlan

JOB_ID = "0f3c2b1a9e8d7c6b5a4f3e2d1c0b9a88"
EVERYTHING = frozenset({"dynamodb", "sqs", "cloudformation"})

Call = Callable[[SqsJobStore], Awaitable[Any]]


async def blocking(function: Callable[[], Any]) -> Any:
    return await asyncio.to_thread(function)


CALLS: dict[str, Call] = {
    "enqueue": lambda s: JobQueue(s).enqueue("ledger.post", {"amount": "12.50 €"}),
    "enqueue (blocking)": lambda s: blocking(
        lambda: SyncJobQueue(s).enqueue("ledger.post", {"amount": "12.50 €"})
    ),
    "get": lambda s: s.get(JOB_ID, time.time()),
    "get (blocking)": lambda s: blocking(lambda: s.sync.get(JOB_ID, time.time())),
    "cancel": lambda s: s.cancel(JOB_ID, time.time()),
    "list": lambda s: s.list(JobFilter(), 10, None, time.time()),
    "list (blocking)": lambda s: blocking(lambda: s.sync.list(JobFilter(), 10, None, time.time())),
    "claim": lambda s: s.claim("default", "worker-ø", time.time()),
    "retry": lambda s: s.retry(JOB_ID, time.time()),
    "retry (blocking)": lambda s: blocking(lambda: s.sync.retry(JOB_ID, time.time())),
    "stats": lambda s: s.stats(),
    "reconcile": lambda s: s.reconcile(grace=0),
    "reconcile (blocking)": lambda s: blocking(lambda: s.sync.reconcile(grace=0)),
    "dead_letters": lambda s: s.dead_letters(),
    "redrive": lambda s: s.redrive(),
}


@pytest.fixture
async def store(faulty_aws: FaultyAws) -> AsyncIterator[SqsJobStore]:
    made = SqsJobStore.create(
        f"errs-{uuid.uuid4().hex[:8]}", endpoint_url=faulty_aws.endpoint, max_attempts=2
    )
    made.sync.describe("default")  # its DLQ known, so the operator calls reach AWS
    try:
        yield made
    finally:
        await made.aclose()


@pytest.mark.parametrize("name", sorted(CALLS))
async def test_a_refused_call_is_a_job_store_error_that_will_not_pass_later(
    store: SqsJobStore, faulty_aws: FaultyAws, name: str
) -> None:
    plan = FaultPlan(kinds=(Fault.DENIED,), rate=1.0, services=EVERYTHING)
    with faulty_aws.injector.faults(plan), pytest.raises(JobStoreError) as caught:
        await CALLS[name](store)
    error = caught.value
    assert error.code.startswith("AccessDenied") and not error.retryable
    assert error.operation[0].isupper() and "_" not in error.operation
    assert isinstance(error.__cause__, ClientError)
    assert error.operation in str(error) and "AccessDenied" in str(error)


@pytest.mark.parametrize("name", ["enqueue", "get (blocking)", "claim", "stats"])
async def test_a_call_throttled_through_every_retry_is_a_throttled_error_to_retry_later(
    store: SqsJobStore, faulty_aws: FaultyAws, name: str
) -> None:
    plan = FaultPlan(kinds=(Fault.THROTTLE,), rate=1.0)
    with faulty_aws.injector.faults(plan), pytest.raises(JobStoreThrottledError) as caught:
        await CALLS[name](store)
    assert caught.value.retryable and isinstance(caught.value.__cause__, ClientError)


async def test_a_server_error_is_a_job_store_error_that_may_pass_later(
    store: SqsJobStore, faulty_aws: FaultyAws
) -> None:
    plan = FaultPlan(kinds=(Fault.SERVER_ERROR,), rate=1.0)
    with faulty_aws.injector.faults(plan), pytest.raises(JobStoreError) as caught:
        await CALLS["get"](store)
    assert not isinstance(caught.value, JobStoreThrottledError)
    assert (caught.value.operation, caught.value.retryable) == ("GetItem", True)


def test_building_a_store_from_a_stack_aws_refuses_is_a_job_store_error(
    faulty_aws: FaultyAws,
) -> None:
    plan = FaultPlan(kinds=(Fault.DENIED,), rate=1.0, services=EVERYTHING)
    with faulty_aws.injector.faults(plan), pytest.raises(JobStoreError) as stack:
        SqsJobStore.from_stack("orders-prod", endpoint_url=faulty_aws.endpoint)
    assert (stack.value.operation, stack.value.code) == ("DescribeStacks", "AccessDenied")
    with faulty_aws.injector.faults(plan), pytest.raises(JobStoreError) as created:
        SqsJobStore.create(f"errs-{uuid.uuid4().hex[:8]}", endpoint_url=faulty_aws.endpoint)
    assert isinstance(created.value.__cause__, ClientError)
