"""SqsJobStore's configuration surface, provisioning, limits and listing at scale."""

from __future__ import annotations

import asyncio
import base64
import time
import warnings
from typing import Any

import boto3
import pytest

from sqsjobs import EnqueueRequest, JobConfigError, JobQueue, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing import RequestCounter, RequestCounts, local_aws

from .emulator import COUNTER, ENVIRONMENT


def test_create_is_idempotent(aws_endpoint: str, prefix: str) -> None:
    queues = ["a", "b:c"]
    with (
        SqsJobStore.create(prefix, queues=queues, endpoint_url=aws_endpoint) as first,
        SqsJobStore.create(prefix, queues=queues, endpoint_url=aws_endpoint) as again,
    ):
        assert (again.table_name, dict(again.queue_urls)) == (
            first.table_name,
            dict(first.queue_urls),
        )
        assert dict(again.dead_letter_queue_urls) == dict(first.dead_letter_queue_urls)
        assert set(first.queue_urls) == {"a", "b:c"}


def test_from_env_learns_the_dead_letter_queues_from_the_redrive_policy_when_needed(
    aws_endpoint: str, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SqsJobStore.create(prefix, queues=["default", "high"], endpoint_url=aws_endpoint) as made:
        urls = ",".join(f"{q}={u}" for q, u in made.queue_urls.items())
        monkeypatch.setenv("SQSJOBS_TABLE", made.table_name)
        monkeypatch.setenv("SQSJOBS_QUEUES", urls)
        with SqsJobStore.from_env(endpoint_url=aws_endpoint) as store:
            assert dict(store.queue_urls) == dict(made.queue_urls)
            before = COUNTER.counts()
            assert dict(store.dead_letter_queue_urls) == {}  # reading it sends nothing
            assert COUNTER.counts() - before == RequestCounts.none()
            store.sync.stats()  # a call that needs the DLQs learns them
            assert dict(store.dead_letter_queue_urls) == dict(made.dead_letter_queue_urls)
            queue = SyncJobQueue(store, default_queue="high")
            job = queue.enqueue("from.env").job
            assert queue.get(job.id) == job


def test_from_env_needs_its_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SQSJOBS_TABLE", raising=False)
    with pytest.raises(ValueError, match="SQSJOBS_TABLE"):
        SqsJobStore.from_env()


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"queue_urls": {}}, ValueError),
        ({"queue_urls": {"bad name": "https://q"}}, JobConfigError),
        ({"table_name": ""}, ValueError),
        ({"wait_time": 21}, ValueError),
        ({"retention": -1}, ValueError),
        ({"dead_retention": float("nan")}, ValueError),
        ({"retention": float("inf")}, ValueError),
        ({"resend_after": True}, ValueError),
        ({"clock_skew": "2"}, ValueError),
        ({"wait_time": 10**400}, ValueError),
    ],
)
def test_the_constructor_refuses_bad_settings(
    arguments: dict[str, Any], error: type[Exception]
) -> None:
    settings: dict[str, Any] = {"table_name": "jobs", "queue_urls": {"default": "https://q"}}
    with pytest.raises(error):
        SqsJobStore(**(settings | arguments))


def test_its_configuration_is_read_only() -> None:
    with SqsJobStore(table_name="jobs", queue_urls={"default": "https://q"}) as store:
        with pytest.raises(TypeError):
            store.queue_urls["other"] = "https://x"  # type: ignore[index]
        with pytest.raises(AttributeError):
            store.table_name = "other"  # type: ignore[misc]


async def test_payloads_up_to_350_kib_fit_and_larger_caps_are_refused(
    store: SqsJobStore,
) -> None:
    with pytest.raises(ValueError, match="payload_max_bytes"):
        JobQueue(store, payload_max_bytes=350 * 1024 + 1)
    queue = JobQueue(store, payload_max_bytes=350 * 1024)
    payload = {"blob": "x" * (350 * 1024 - 20)}
    job = (await queue.enqueue("big", payload)).job
    [claimed] = await store.claim("default", "w", time.time())
    assert claimed.payload == payload
    assert await store.complete(job.id, claimed.lease_token or "", time.time(), {"ok": 1})


async def test_a_queue_without_an_sqs_queue_is_refused_before_writing(
    store: SqsJobStore,
) -> None:
    queue = JobQueue(store)
    with pytest.raises(JobConfigError, match="no SQS queue"):
        await queue.enqueue("lost", queue="nowhere")
    assert (await queue.list()).jobs == []


async def test_list_merges_shards_statuses_and_queues_across_pages(store: SqsJobStore) -> None:
    queue = JobQueue(store)
    requests = [
        EnqueueRequest("wanted" if n % 5 == 0 else "noise", n, queue=("default", "other")[n % 2])
        for n in range(40)
    ]
    written = [r.job for r in await queue.enqueue_many(requests)]
    await store.claim("default", "w", time.time(), limit=3)
    everything, cursor = [], None
    while True:
        page = await queue.list(limit=7, cursor=cursor)
        everything += page.jobs
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    ordered = sorted(written, key=lambda j: (j.created_at, j.id))
    assert [j.id for j in everything] == [j.id for j in ordered]
    assert sum(j.status is JobStatus.RUNNING for j in everything) == 3
    wanted, cursor = [], None
    while True:  # a filter that skips most items: DynamoDB pages come back thin
        page = await queue.list(name="wanted", limit=2, cursor=cursor)
        wanted += [j.payload for j in page.jobs]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert wanted == [j.payload for j in ordered if j.name == "wanted"]
    assert len(wanted) == 8


@pytest.mark.parametrize(
    "position", ['[NaN,"x"]', '[1e999,"x"]', '[-Infinity,"x"]', '[1e300,"x"]', '[1.5,"\\ud800"]']
)
async def test_list_refuses_a_cursor_that_is_not_a_finite_position(
    store: SqsJobStore, position: str
) -> None:
    queue = JobQueue(store)
    await queue.enqueue("report.build", {"tenant": "acme"})
    cursor = base64.urlsafe_b64encode(position.encode()).decode()
    with pytest.raises(JobConfigError) as caught:
        await queue.list(cursor=cursor)
    assert caught.value.code == "invalid_option"


async def test_close_after_async_use_asks_for_aclose(aws_endpoint: str, prefix: str) -> None:
    store = SqsJobStore.create(prefix, endpoint_url=aws_endpoint)
    await store.get("0" * 32, time.time())
    with pytest.warns(ResourceWarning, match="aclose"):
        store.close()
    await store.aclose()


def test_local_aws_serves_its_own_emulator_and_counts_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in ENVIRONMENT.items():  # dummy credentials, even when run alone
        monkeypatch.setenv(name, value)
    counter = RequestCounter()
    with local_aws(counter=counter) as endpoint:
        assert endpoint.startswith("http://127.0.0.1:")
        client = boto3.client("dynamodb", endpoint_url=endpoint)
        client.create_table(
            TableName="t",
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        )
        items = [{"PutRequest": {"Item": {"pk": {"S": str(n)}}}} for n in range(3)]
        client.batch_write_item(RequestItems={"t": items})
        client.get_item(TableName="t", Key={"pk": {"S": "1"}})
        client.close()
        stacks = boto3.client("cloudformation", endpoint_url=endpoint)
        stacks.list_stacks()  # moto's state is per process: other tests' stacks may show
        stacks.close()
    counts = counter.counts()
    assert (counts.dynamodb_writes, counts.dynamodb_reads) == (3, 1)
    assert counts.requests[("dynamodb", "CreateTable")] == 1
    assert counts.requests[("cloudformation", "ListStacks")] == 1  # query protocol: in the body


def test_the_emulators_retention_check_gives_motos_answer_without_reading_the_queue(
    aws_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``local_aws`` replaced moto's check (which computes every queue attribute, message
    counts included, for each message a receive returns): same answer either side of
    the retention period, and no queue attribute computed."""
    from moto.sqs.models import Queue, SQSBackend

    backend = SQSBackend("eu-west-3", "210987654321")
    backend.create_queue("kept-a-minute", MessageRetentionPeriod="60")
    messages = [backend.send_message("kept-a-minute", f"zoë {n}") for n in range(50)]
    check = SQSBackend.is_message_valid_based_on_retention_period
    moto_check = check.replaced  # type: ignore[attr-defined]
    now = time.time()
    answers = []
    for message, age in zip(messages, (0.37, 59.2, 60.9, 3600.4), strict=False):
        message.sent_timestamp = int((now - age) * 1000)
        answers.append(moto_check(backend, "kept-a-minute", message))
        with monkeypatch.context() as patch:
            patch.setattr(Queue, "attributes", property(lambda queue: pytest.fail("read")))
            assert check(backend, "kept-a-minute", message) == answers[-1]
    assert answers == [True, True, False, False]


def test_the_emulators_fifo_group_lock_reads_a_snapshot_with_motos_answer(
    aws_endpoint: str,
) -> None:
    """``local_aws`` made a receive read the groups in flight from a copy of the pending
    messages (moto iterated the live set while concurrent requests changed it)."""
    from moto.sqs.models import Queue, SQSBackend

    backend = SQSBackend("eu-west-3", "210987654321")
    backend.create_queue("orders.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    for n, group in enumerate(("acme", "acme", "globex", "initech")):
        backend.send_message("orders.fifo", f"zoë {n}", group_id=group)
    backend.receive_message("orders.fifo", 10, 0, 30)
    queue = backend.get_queue("orders.fifo")
    patched = Queue.__dict__["pending_message_groups"].fget
    original = patched.replaced.fget
    assert patched(queue) == original(queue) == {"acme", "globex", "initech"}


def test_the_endpoint_follows_the_standard_environment(
    aws_endpoint: str, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SqsJobStore.create(prefix, endpoint_url=aws_endpoint) as made:
        monkeypatch.setenv("AWS_ENDPOINT_URL", aws_endpoint)
        with SqsJobStore(table_name=made.table_name, queue_urls=made.queue_urls) as store:
            queue = SyncJobQueue(store)
            job = queue.enqueue("via.env").job
            assert queue.get(job.id) == job


def test_close_after_each_loop_closed_its_clients_does_not_warn(
    aws_endpoint: str, prefix: str
) -> None:
    """``asyncio.run`` closes a loop's clients as it ends: nothing is left for aclose()."""
    store = SqsJobStore.create(prefix, endpoint_url=aws_endpoint)
    asyncio.run(store.get("0" * 32, time.time()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store.close()


@pytest.mark.parametrize("count", [0, 1001, 5.0, True, "10"])
def test_create_refuses_a_max_receive_count_that_is_not_an_int_from_1_to_1000(
    count: Any, aws_endpoint: str, prefix: str
) -> None:
    with pytest.raises(ValueError, match="max_receive_count"):
        SqsJobStore.create(prefix, max_receive_count=count, endpoint_url=aws_endpoint)
