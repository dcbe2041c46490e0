"""FIFO queues on the emulator: one job per group at a time, in enqueue order.

moto keeps a FIFO group locked while one of its messages is in flight, and returns
several messages of one group in one receive (EMULATOR-NOTES, "Measured 2026-12-01");
so these tests show that the store's claim, not SQS alone, keeps a group's jobs apart.
One moto quirk shapes them: a long poll that started while a group was locked does not
see the group unlock, so the stores here long-poll for 1 s at most (``wait_time=1``).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sqsjobs import (
    Backoff,
    EnqueueRequest,
    Job,
    JobConfigError,
    JobContext,
    JobQueue,
    JobWorker,
    SyncJobQueue,
)
from sqsjobs.aws import SqsJobStore

from .conftest import SKEW
from .emulator import COUNTER


@pytest.fixture
async def fifo(aws_endpoint: str, prefix: str) -> AsyncIterator[SqsJobStore]:
    made = SqsJobStore.create(
        prefix,
        queues=("default",),
        fifo=True,
        max_receive_count=10,
        endpoint_url=aws_endpoint,
        clock_skew=SKEW,
        wait_time=1,
    )
    try:
        yield made
    finally:
        await made.aclose()


def received(sqs: Any, url: str, count: int) -> list[dict[str, Any]]:
    """Receive ``count`` messages (hidden for a minute), with their system attributes."""
    messages: list[dict[str, Any]] = []
    deadline = time.monotonic() + 10
    while len(messages) < count and time.monotonic() < deadline:
        reply = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=1,
            VisibilityTimeout=60,
            MessageSystemAttributeNames=["All"],
        )
        messages += reply.get("Messages", [])
    return messages


def test_create_makes_fifo_queues_and_dlqs_without_content_based_dedup(
    fifo: SqsJobStore, sqs: Any
) -> None:
    url = fifo.queue_urls["default"]
    dead_letter_url = fifo.dead_letter_queue_urls["default"]
    assert url.endswith("-default.fifo") and dead_letter_url.endswith("-default-dlq.fifo")
    for queue in (url, dead_letter_url):
        attributes = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])
        assert attributes["Attributes"]["FifoQueue"] == "true"
        assert attributes["Attributes"]["ContentBasedDeduplication"] == "false"


@pytest.mark.usefixtures("one_pause_read")
async def test_two_groups_of_ten_run_one_at_a_time_per_group_in_enqueue_order(
    fifo: SqsJobStore,
) -> None:
    queue = JobQueue(fifo)
    spans: dict[str, list[tuple[int, float, float]]] = {"anna": [], "bjørn": []}
    done = asyncio.Event()

    async def step(ctx: JobContext) -> None:
        started = time.monotonic()
        await asyncio.sleep(0.05)
        spans[ctx.payload["who"]].append((ctx.payload["n"], started, time.monotonic()))
        if sum(map(len, spans.values())) == 20:
            done.set()

    requests = [
        EnqueueRequest("ledger.post", {"who": who, "n": n}, group=f"account-{i}")
        for n in range(10)
        for i, who in enumerate(spans)
    ]
    before = COUNTER.counts()
    results = await queue.enqueue_many(requests)
    assert [r.job.group for r in results[:2]] == ["account-0", "account-1"]
    async with JobWorker(queue, {"ledger.post": step}, concurrency=4):
        await asyncio.wait_for(done.wait(), 90)
    await fifo.aclose()
    spent = COUNTER.counts() - before

    for runs in spans.values():
        assert [n for n, _, _ in runs] == list(range(10))  # completion order = enqueue order
        for (_, _, ended), (_, started, _) in itertools.pairwise(runs):
            assert started >= ended  # never two of one group at once
    # Three item writes per job and no reads, as on a standard queue (and the worker's
    # presence record: put at its start, ended at its stop); every message received
    # beside an earlier one of its group is made visible again, in batches.
    assert spent.dynamodb_writes == 60 + 2, spent.requests
    assert spent.dynamodb_reads == 1, spent.requests  # the paused queues, read once
    assert spent.requests[("sqs", "SendMessageBatch")] == 2, spent.requests


async def test_one_receive_claims_only_the_first_message_of_each_group(
    fifo: SqsJobStore,
) -> None:
    queue = JobQueue(fifo)
    for n in range(3):
        await queue.enqueue("a", {"n": n}, tenant="acme")
    await queue.enqueue("a", {"n": 9}, tenant="globex")

    before = COUNTER.counts()
    claimed = await fifo.claim("default", "w1", time.time(), limit=4, wait=1)
    spent = COUNTER.counts() - before
    assert sorted((j.group, j.payload) for j in claimed) == [
        ("acme", {"n": 0}),
        ("globex", {"n": 9}),
    ]
    # One receive of four, two claims, and one batch that hands back acme's later two.
    assert spent.requests[("sqs", "ReceiveMessage")] == 1, spent.requests
    assert spent.requests[("dynamodb", "UpdateItem")] == 2, spent.requests
    assert spent.requests[("sqs", "ChangeMessageVisibilityBatch")] == 1, spent.requests
    # acme's group stays locked by its running job: nothing more to claim until it ends.
    assert await fifo.claim("default", "w1", time.time(), limit=4, wait=0) == []
    first = next(j for j in claimed if j.group == "acme")
    assert first.lease_token is not None
    assert await fifo.complete(first.id, first.lease_token, time.time(), None)
    await fifo.aclose()  # the batched delete goes out: the group unlocks
    again = await fifo.claim("default", "w1", time.time(), limit=4, wait=1)
    assert [j.payload for j in again] == [{"n": 1}]


async def test_a_failing_jobs_retry_holds_its_group(fifo: SqsJobStore) -> None:
    queue = JobQueue(fifo)
    events: list[str] = []
    done = asyncio.Event()

    async def flaky(ctx: JobContext) -> None:
        n = ctx.payload["n"]
        events.append(f"start {n}.{ctx.attempt}")
        if n == 0 and ctx.attempt == 1:
            raise RuntimeError("ledger briefly unavailable")
        events.append(f"end {n}")
        if n == 2:
            done.set()

    for n in range(3):
        await queue.enqueue("post", {"n": n}, tenant="acme")
    backoff = Backoff(base=1.0, max=1.0, random=lambda: 1.0)
    queue = JobQueue(fifo, backoff=backoff)
    async with JobWorker(queue, {"post": flaky}, concurrency=3):
        await asyncio.wait_for(done.wait(), 30)

    assert events == ["start 0.1", "start 0.2", "end 0", "start 1.1", "end 1", "start 2.1", "end 2"]


async def test_the_reconciler_resends_a_lost_fifo_message_with_its_group_and_a_fresh_id(
    fifo: SqsJobStore, sqs: Any
) -> None:
    url = fifo.queue_urls["default"]
    job = (await JobQueue(fifo).enqueue("report", {"month": "2026-11"}, tenant="acme")).job
    for _ in range(2):  # the second re-send, seconds after the first, must not be swallowed
        for lost in received(sqs, url, 1):  # the message is lost; the record waits
            sqs.delete_message(QueueUrl=url, ReceiptHandle=lost["ReceiptHandle"])
        before = COUNTER.counts()
        report = await fifo.reconcile(grace=0)
        spent = COUNTER.counts() - before
        assert report.resent == 1
        assert spent.requests[("sqs", "SendMessageBatch")] == 1, spent.requests
        [message] = received(sqs, url, 1)
        assert message["Attributes"]["MessageGroupId"] == "acme"
        assert job.id in message["Body"]
        sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
        )
        await asyncio.sleep(0.01)  # the next pass's ``now`` is past this ``resent_at``


async def test_enqueue_many_on_fifo_sends_each_group_in_order(fifo: SqsJobStore, sqs: Any) -> None:
    url = fifo.queue_urls["default"]
    tenants = ["acme", "globex", "initech"]
    requests = [EnqueueRequest("sync", {"n": n}, tenant=tenants[n % 3]) for n in range(12)]
    before = COUNTER.counts()
    results = await JobQueue(fifo).enqueue_many(requests)
    spent = COUNTER.counts() - before
    assert spent.requests[("sqs", "SendMessageBatch")] == 2, spent.requests
    assert spent.requests[("dynamodb", "PutItem")] == 12, spent.requests
    by_id = {r.job.id: r.job for r in results}
    seen: dict[str, list[int]] = {}
    while sum(map(len, seen.values())) < 12:  # delete what each receive gives: groups unlock
        for message in received(sqs, url, 1):
            job = next(job for job_id, job in by_id.items() if job_id in message["Body"])
            assert message["Attributes"]["MessageGroupId"] == job.tenant
            seen.setdefault(job.tenant or "", []).append(job.payload["n"])  # type: ignore[index]
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    assert seen == {t: [n for n in range(12) if tenants[n % 3] == t] for t in tenants}


async def test_a_delayed_fifo_job_goes_at_once_and_holds_its_group_until_due(
    fifo: SqsJobStore,
) -> None:
    queue = JobQueue(fifo)
    started: dict[int, float] = {}
    done = asyncio.Event()

    async def note(ctx: JobContext) -> None:
        started[ctx.payload["n"]] = time.time()
        if len(started) == 2:
            done.set()

    before = COUNTER.counts()
    enqueued_at = time.time()
    await queue.enqueue("note", {"n": 0}, tenant="acme", delay=2)
    await queue.enqueue("note", {"n": 1}, tenant="acme")
    spent = COUNTER.counts() - before
    assert spent.requests[("sqs", "SendMessage")] == 2  # no DelaySeconds: FIFO refuses it
    async with JobWorker(queue, {"note": note}, concurrency=2):
        await asyncio.wait_for(done.wait(), 30)
    assert started[0] >= enqueued_at + 2
    assert started[1] >= started[0]  # the later job waited behind the delayed one


@pytest.mark.parametrize(
    "options",
    [{"delay": 43_201}, {"run_at_hours": 13}],
    ids=["delay", "run_at"],
)
def test_a_delay_past_twelve_hours_on_fifo_is_refused_before_anything_is_written(
    fifo: SqsJobStore, options: dict[str, float]
) -> None:
    from datetime import UTC, datetime, timedelta

    queue = SyncJobQueue(fifo)
    kwargs: dict[str, Any] = {}
    if "delay" in options:
        kwargs["delay"] = options["delay"]
    else:
        kwargs["run_at"] = datetime.now(UTC) + timedelta(hours=options["run_at_hours"])
    before = COUNTER.counts()
    with pytest.raises(JobConfigError, match=r"FIFO queue 'default'.*43200 s") as caught:
        queue.enqueue("report", {"q": "Ω"}, **kwargs)
    with pytest.raises(JobConfigError, match="FIFO"):
        queue.enqueue_many([EnqueueRequest("ok"), EnqueueRequest("report", **kwargs)])
    spent = COUNTER.counts() - before
    assert caught.value.code == "invalid_option"
    assert spent.requests[("dynamodb", "PutItem")] == 0, spent.requests
    assert spent.service("sqs") == 0, spent.requests


async def test_standard_queue_sends_carry_the_group_single_and_batch(
    store: SqsJobStore, sqs: Any
) -> None:
    """Fair queues schedule by ``MessageGroupId``; moto stores and returns it, but does not
    model fair scheduling, so this shows what is sent, not what SQS does with it."""
    url = store.queue_urls["default"]
    queue = JobQueue(store)
    single = (await queue.enqueue("a", tenant="acme")).job
    plain = (await queue.enqueue("a")).job
    chosen = (await queue.enqueue("a", tenant="acme", group="acme/invoices")).job
    batch = await queue.enqueue_many(
        [EnqueueRequest("b", tenant="globex"), EnqueueRequest("b", group="nightly")]
    )
    expected = {
        single.id: "acme",
        plain.id: "queue:default",
        chosen.id: "acme/invoices",
        batch[0].job.id: "globex",
        batch[1].job.id: "nightly",
    }
    groups = {}
    for message in received(sqs, url, 5):
        job_id = next(i for i in expected if i in message["Body"])
        groups[job_id] = message["Attributes"]["MessageGroupId"]
    assert groups == expected
    assert (await store.get(chosen.id, time.time())) == chosen  # the record keeps the group


def test_standard_queue_delays_still_use_delay_seconds(store: SqsJobStore, sqs: Any) -> None:
    url = store.queue_urls["default"]
    SyncJobQueue(store).enqueue("later", tenant="acme", delay=5)
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessagesDelayed"] == "1"


def test_a_job_read_back_keeps_its_group(fifo: SqsJobStore) -> None:
    queue = SyncJobQueue(fifo)
    job = queue.enqueue("a", {"ü": 1}, tenant="acme", group="orders:7").job
    read = queue.get(job.id)
    assert read == job and read is not None and read.group == "acme/orders:7"
    assert Job.model_validate_json(read.model_dump_json()) == read


@pytest.mark.parametrize("group", ["", "two words", "x" * 129, "naïve"], ids=repr)
def test_a_bad_group_is_refused_before_anything_is_written(fifo: SqsJobStore, group: str) -> None:
    before = COUNTER.counts()
    with pytest.raises(JobConfigError, match=r"Invalid group .*must match") as caught:
        SyncJobQueue(fifo).enqueue("a", tenant="acme", group=group)
    assert caught.value.code == "invalid_option"
    spent = COUNTER.counts() - before
    assert spent.requests[("dynamodb", "PutItem")] == 0 and spent.service("sqs") == 0


async def posts_run_in_order(queue: JobQueue, producer: Any) -> list[int]:
    """Enqueue posts 0, 1, 2 through ``producer`` (``queue`` or a tenant's view of it) and
    run ``queue``'s jobs with two slots; the order the posts ran in."""
    ran: list[int] = []
    done = asyncio.Event()

    async def post(ctx: JobContext) -> None:
        ran.append(ctx.payload["n"])
        if len(ran) == 3:
            done.set()

    for n in range(3):
        await producer.enqueue("post", {"n": n})
    async with JobWorker(queue, {"post": post}, concurrency=2):
        await asyncio.wait_for(done.wait(), 60)
    return ran


async def test_another_tenant_cannot_stall_a_tenants_fifo_group(fifo: SqsJobStore) -> None:
    """A tenant naming another tenant's group, with a job due in 12 hours, holds a group of
    its own: the other tenant's jobs run, in order, while it waits."""
    queue = JobQueue(fifo)
    stalling = await queue.for_tenant("evil").enqueue("post", {"n": -1}, group="acme", delay=43_200)
    assert await posts_run_in_order(queue, queue.for_tenant("acme")) == [0, 1, 2]
    held = await queue.get(stalling.job.id)
    assert held is not None and (held.status, held.group) == ("delayed", "evil/acme")
    assert fifo.queue_urls["default"].endswith(".fifo")


async def test_a_tenant_named_like_the_queue_cannot_stall_its_untenanted_jobs(
    fifo: SqsJobStore,
) -> None:
    """Untenanted jobs were grouped under the queue's name, which is a valid tenant id
    (``default``, ``billing``): that tenant's job delayed 12 hours held them all back."""
    queue = JobQueue(fifo)
    stalling = await queue.for_tenant("default").enqueue("post", {"n": -1}, delay=43_200)
    assert await posts_run_in_order(queue, queue) == [0, 1, 2]
    held = await queue.get(stalling.job.id)
    assert held is not None and (held.status, held.group) == ("delayed", "default")


async def test_a_tenant_views_group_is_sent_within_its_tenant_single_and_batch(
    store: SqsJobStore, sqs: Any
) -> None:
    url = store.queue_urls["default"]
    queue = JobQueue(store)
    evil = queue.for_tenant("evil")
    acme = (await queue.for_tenant("acme").enqueue("a", {"n": 0})).job
    single = (await evil.enqueue("a", {"n": 1}, group="acme")).job
    batch = await evil.enqueue_many(
        [EnqueueRequest("b", {"n": 2}, group="acme/ledger"), EnqueueRequest("b", {"n": 3})]
    )
    expected = {
        acme.id: "acme",
        single.id: "evil/acme",
        batch[0].job.id: "evil/acme/ledger",
        batch[1].job.id: "evil",
    }
    groups = {}
    for message in received(sqs, url, 4):
        job_id = next(i for i in expected if i in message["Body"])
        groups[job_id] = message["Attributes"]["MessageGroupId"]
    assert groups == expected
    for job_id, group in expected.items():
        record = await store.get(job_id, time.time())
        assert record is not None and record.group == group
