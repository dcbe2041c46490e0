"""The async face without aioboto3: ``JobQueue`` over ``SqsJobStore`` in a base install."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator

import pytest

from sqsjobs import JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore
from tests.aws.emulator import unique_prefix


@pytest.fixture
async def store(aws_endpoint: str) -> AsyncIterator[SqsJobStore]:
    made = SqsJobStore.create(
        unique_prefix(), queues=("default", "mails"), endpoint_url=aws_endpoint
    )
    try:
        yield made
    finally:
        await made.aclose()


@pytest.fixture
def without_aioboto3(monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing aioboto3 fails as it does where the worker extra is not installed."""
    monkeypatch.setitem(sys.modules, "aioboto3", None)
    monkeypatch.delitem(sys.modules, "sqsjobs.aws.transports.aio", raising=False)


@pytest.mark.usefixtures("without_aioboto3")
async def test_job_queue_enqueues_and_reads_over_boto3_threads(store: SqsJobStore) -> None:
    queue = JobQueue(store).for_tenant("acme-7")
    mail = {"to": "zoë@example.com"}
    first = await queue.enqueue("mail.send", mail, queue="mails")
    key = "welcome/zoe-1796094741"
    again = await queue.enqueue("mail.send", mail, queue="mails", idempotency_key=key)
    repeat = await queue.enqueue("mail.send", mail, queue="mails", idempotency_key=key)
    job = await queue.get(first.job.id)
    assert job is not None
    assert (job.status, job.payload, job.queue, job.tenant) == (
        JobStatus.QUEUED,
        {"to": "zoë@example.com"},
        "mails",
        "acme-7",
    )
    assert (again.duplicate, repeat.duplicate, repeat.job.id) == (False, True, again.job.id)
    assert "sqsjobs.aws.transports.aio" not in sys.modules
