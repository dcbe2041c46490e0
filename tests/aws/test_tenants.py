"""Tenants on SqsJobStore: a key reused by another tenant is a new job with its own message."""

from __future__ import annotations

import time

import pytest

from sqsjobs import Job, JobQueue, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.items import keyed_id

from ..test_queue import call

KEY = "invoice/7f3a9c41-2026-11"


async def claim_all(store: SqsJobStore, count: int) -> list[Job]:
    claimed: list[Job] = []
    deadline = time.monotonic() + 10
    while len(claimed) < count and time.monotonic() < deadline:
        claimed += await store.claim("default", "w-1", time.time(), limit=10, wait=1.0)
    return claimed


@pytest.mark.parametrize("cls", [JobQueue, SyncJobQueue], ids=["async", "sync"])
async def test_tenants_reusing_a_key_get_a_job_and_a_message_each(
    store: SqsJobStore, cls: type[JobQueue | SyncJobQueue]
) -> None:
    queue = cls(store)
    acme, globex = queue.for_tenant("acme"), queue.for_tenant("globex")
    first = await call(acme.enqueue("invoice.send", {"total": 12.5}, idempotency_key=KEY))
    second = await call(globex.enqueue("invoice.send", {"total": 99.0}, idempotency_key=KEY))
    assert (first.duplicate, second.duplicate) == (False, False)
    assert first.job.id == keyed_id("default", "acme", KEY)
    assert second.job.id == keyed_id("default", "globex", KEY)
    assert await call(globex.get(first.job.id)) is None
    assert await call(globex.cancel(first.job.id)) is False
    claimed = await claim_all(store, 2)
    assert sorted((job.tenant, job.id) for job in claimed) == [
        ("acme", first.job.id),
        ("globex", second.job.id),
    ]
    assert all(job.status is JobStatus.RUNNING for job in claimed)
