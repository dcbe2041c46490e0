"""The async face without aiobotocore: ``JobQueue`` over ``SqsJobStore`` in a base install."""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator

import pytest

from sqsjobs import JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.transports.lean import LeanSender
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
def without_aiobotocore(monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing aiobotocore fails as it does where the worker extra is not installed."""
    for name in [name for name in sys.modules if name.partition(".")[0] == "aiobotocore"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "aiobotocore", None)
    monkeypatch.delitem(sys.modules, "sqsjobs.aws.transports.aio", raising=False)


@pytest.mark.usefixtures("without_aiobotocore")
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


async def test_the_lean_path_claims_and_completes_through_aiohttp(aws_endpoint: str) -> None:
    """``lean=True`` sends an operation's later calls itself, through the client's own
    aiohttp session; a store without it opens no lean sender at all."""
    lean_store = SqsJobStore.create(
        unique_prefix(), queues=("mails",), endpoint_url=aws_endpoint, lean=True
    )
    plain = SqsJobStore.create(unique_prefix(), queues=("mails",), endpoint_url=aws_endpoint)
    try:
        for store in (lean_store, plain):
            queue = JobQueue(store).for_tenant("acme-7")
            for n in range(2):  # an operation's second call takes the lean path
                mail = {"to": f"zoë+{n}@example.com"}
                enqueued = await queue.enqueue("mail.send", mail, queue="mails")
                [claimed] = await store.claim("mails", "worker-7", time.time(), wait=2.0)
                assert claimed.id == enqueued.job.id and claimed.lease_token is not None
                assert await store.complete(claimed.id, claimed.lease_token, time.time(), n)
        opened = []
        for store in (lean_store, plain):
            aio = store._transport._aio
            assert aio is not None
            opened.append((await aio._opened("dynamodb"))[1])
        lean, none = opened
        assert isinstance(lean, LeanSender) and "update_item" in lean._routes
        assert none is None
    finally:
        await lean_store.aclose()
        await plain.aclose()
