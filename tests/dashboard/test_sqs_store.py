"""The dashboard over ``SqsJobStore`` on the emulator: SQS depths, dead letters, a retry.

Driven through httpx2's ASGI transport on the test's own event loop, the loop the store's
asyncio clients belong to.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from typing import Any

import boto3
import httpx2
import pytest

from sqsjobs import JobStatus
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.history import history_items, keep_history
from sqsjobs.contrib.dashboard import make_dashboard
from sqsjobs.contrib.dashboard._source import JobSource
from sqsjobs.testing.meter import Read
from tests.aws.emulator import COUNTER, METER, shared_endpoint, unique_prefix

from .conftest import LOCAL, csrf_token
from .seed import Seeded, seed


@pytest.fixture
async def sqs_store(pytestconfig: pytest.Config) -> AsyncIterator[SqsJobStore]:
    made = SqsJobStore.create(
        unique_prefix(),
        queues=("default", "other"),
        max_receive_count=5,
        endpoint_url=shared_endpoint(pytestconfig),
    )
    try:
        yield made
    finally:
        await made.aclose()


@pytest.fixture
async def seeded_sqs(sqs_store: SqsJobStore) -> Seeded:
    return await seed(sqs_store)


def client_for(store: SqsJobStore, **options: object) -> httpx2.AsyncClient:
    app = make_dashboard(store, **options)  # type: ignore[arg-type]
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=LOCAL)


def row(html: str, queue: str) -> str:
    return html.split(f'<tr data-queue="{queue}">')[1].split("</tr>")[0]


async def test_the_overview_shows_counts_and_sqs_depths(
    sqs_store: SqsJobStore, seeded_sqs: Seeded
) -> None:
    async with client_for(sqs_store) as client:
        page = await client.get("/")
    assert page.status_code == 200
    default, other = row(page.text, "default"), row(page.text, "other")
    for status, count in (("queued", 3), ("completed", 1), ("dead", 1), ("cancelled", 1)):
        assert f'status={status}">{count}</a>' in default
    # SQS: three queued jobs' messages visible (the cancelled one's delayed message is
    # still there too); each dead job's message in its queue's DLQ. The completed job's
    # message is deleted in the store's next batch, so it may still be in flight.
    depths = re.findall(r'<td class="num sqs-depth">([^<]*)</td>', default)
    assert depths in (
        ["3 visible / 0 in flight / 1 delayed"],
        ["3 visible / 1 in flight / 1 delayed"],
    ), depths
    # A dead-letter queue holding messages is red, and the page says why.
    assert '<td class="num dlq-depth alert">1</td>' in default
    assert '<td class="num dlq-depth alert">1</td>' in other
    assert "1 message in the dead-letter queue of other" in page.text
    assert "0 completed, 1 dead" in other


async def test_the_dead_letter_page_shows_the_dlq_depths(
    sqs_store: SqsJobStore, seeded_sqs: Seeded
) -> None:
    async with client_for(sqs_store) as client:
        page = await client.get("/dead")
    assert '<span class="depth">default: 1</span><span class="depth">other: 1</span>' in page.text
    assert seeded_sqs.dead in page.text and seeded_sqs.hostile in page.text


async def test_the_dlq_depths_are_read_from_sqs_alone(
    sqs_store: SqsJobStore, seeded_sqs: Seeded
) -> None:
    source = JobSource(sqs_store, time.time)
    before = COUNTER.counts()
    assert await source.dead_letter_depths() == {"default": 1, "other": 1}
    spent = COUNTER.counts() - before
    assert spent.requests == {("sqs", "GetQueueAttributes"): 2}
    assert sqs_store.sync.dead_letter_depths(["other"]) == {"other": 1}


async def test_an_overview_reads_the_same_beside_a_longer_history(
    sqs_store: SqsJobStore, seeded_sqs: Seeded, pytestconfig: pytest.Config
) -> None:
    """The ended jobs kept from before the throughput's hour are never read."""
    source = JobSource(sqs_store, time.time)
    with METER.record() as records:
        first = await source.overview()
    dynamodb = boto3.client("dynamodb", endpoint_url=shared_endpoint(pytestconfig))
    try:
        history = history_items("default", 600, ended_before=time.time() - 3_700, seed=3)
        keep_history(dynamodb, sqs_store.table_name, history)
    finally:
        dynamodb.close()
    with METER.record() as again:
        second = await JobSource(sqs_store, time.time).overview()
    assert read_units(again, sqs_store) == read_units(records, sqs_store)
    assert [q.counts for q in second.queues] == [q.counts for q in first.queues]


def read_units(records: list[Any], store: SqsJobStore) -> float:
    return sum(r.units for r in records if isinstance(r, Read) and r.table == store.table_name)


async def test_retry_revives_the_dead_job_and_sends_its_message(
    sqs_store: SqsJobStore, seeded_sqs: Seeded
) -> None:
    async with client_for(sqs_store, actions=True) as client:
        page = await client.get(f"/jobs/{seeded_sqs.dead}")
        done = await client.post(
            f"/jobs/{seeded_sqs.dead}/retry", data={"csrf_token": csrf_token(page.text)}
        )
        assert done.status_code == 303
        after = await client.get(done.headers["location"])
    assert "Retried: the job is queued again" in after.text
    job = await sqs_store.get(seeded_sqs.dead, time.time())
    assert job is not None and (job.status, job.attempts) == (JobStatus.QUEUED, 0)
    [claimed] = await sqs_store.claim("other", "worker-2", time.time(), wait=2.0)
    assert claimed.id == seeded_sqs.dead


async def test_redrive_by_name_empties_that_handlers_dead_letters(
    sqs_store: SqsJobStore, seeded_sqs: Seeded
) -> None:
    async with client_for(sqs_store, actions=True) as client:
        page = await client.get("/dead", params={"name": "billing.charge"})
        form = {"csrf_token": csrf_token(page.text), "name": "billing.charge", "queue": ""}
        done = await client.post("/dead/redrive", data=form)
        after = await client.get(done.headers["location"])
    assert "dead jobs sent back to their queues: 1" in after.text
    job = await sqs_store.get(seeded_sqs.dead, time.time())
    hostile = await sqs_store.get(seeded_sqs.hostile, time.time())
    assert job is not None and job.status is JobStatus.QUEUED
    assert hostile is not None and hostile.status is JobStatus.DEAD


async def test_retry_of_a_dead_job_whose_payload_is_gone_says_why(
    sqs_store: SqsJobStore, seeded_sqs: Seeded, pytestconfig: pytest.Config
) -> None:
    import boto3

    from sqsjobs import JobQueue
    from sqsjobs.testing.payloads import random_document

    payload = {"invoice": "Zürich-9", **random_document(3_000, seed=9)}
    job = (await JobQueue(sqs_store).enqueue("billing.charge", payload, max_attempts=1)).job
    [claimed] = await sqs_store.claim("default", "worker-3", time.time(), wait=2.0)
    while claimed.id != job.id:  # the seed's queued jobs come first
        [claimed] = await sqs_store.claim("default", "worker-3", time.time(), wait=2.0)
    assert await sqs_store.fail(job.id, claimed.lease_token or "", "boom", None, time.time())
    dynamodb = boto3.client("dynamodb", endpoint_url=shared_endpoint(pytestconfig))
    record = dynamodb.get_item(
        TableName=sqs_store.table_name, Key={"pk": {"S": f"job#{job.id}"}}, ConsistentRead=True
    )["Item"]
    dynamodb.delete_item(TableName=sqs_store.table_name, Key={"pk": record["body_pk"]})
    dynamodb.close()
    async with client_for(sqs_store, actions=True) as client:
        page = await client.get(f"/jobs/{job.id}")
        done = await client.post(
            f"/jobs/{job.id}/retry", data={"csrf_token": csrf_token(page.text)}
        )
    assert done.status_code == 400
    assert "its payload is gone" in done.text
    after = await sqs_store.get(job.id, time.time())
    assert after is not None and after.status is JobStatus.DEAD
