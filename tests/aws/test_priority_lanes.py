"""Priority lanes on SQS: urgent jobs overtake the backlog, at a bounded cost in requests.

A job of priority 1 or more (the default band) is sent to its queue and to the queue's
lane; a busy worker reads the lane first, an idle one long-polls the queue alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from sqsjobs import EnqueueRequest, Job, JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.store.config import parse_lanes
from sqsjobs.aws.store.lanes import SHARE
from sqsjobs.aws.wire.protocol import Call, Reply

Send = Callable[[Call], Awaitable[Reply]]


def lane_of(store: SqsJobStore, queue: str = "default") -> str:
    [(lowest, url)] = store._state.layout.lanes[queue]
    assert lowest == 1
    return url


def record_calls(store: SqsJobStore) -> list[tuple[str, str]]:
    """(action, queue URL) of every SQS request the store's async face sends."""
    calls: list[tuple[str, str]] = []
    send: Send = store._send

    async def recording(call: Call) -> Reply:
        if call.service == "sqs":
            calls.append((call.operation, str(call.params.get("QueueUrl", ""))))
        return await send(call)

    store._send = recording  # type: ignore[method-assign]
    return calls


async def drain_in_order(
    store: SqsJobStore, jobs: int, *, concurrency: int, until: Callable[[list[Job]], bool]
) -> list[Job]:
    completed: list[Job] = []
    done = asyncio.Event()

    def on_complete(job: Job) -> None:
        completed.append(job)
        if len(completed) == jobs or until(completed):
            done.set()

    async def work(ctx: JobContext) -> None:
        await asyncio.sleep(0)

    worker = JobWorker(
        JobQueue(store),
        {"work": work},
        queues=["default"],
        concurrency=concurrency,
        on_complete=on_complete,
    )
    async with worker:
        await asyncio.wait_for(done.wait(), 120)
    return completed


@pytest.mark.slow
async def test_twenty_urgent_jobs_overtake_a_backlog_of_two_hundred(store: SqsJobStore) -> None:
    queue = JobQueue(store)
    backlog = [EnqueueRequest("work", {"n": n}) for n in range(200)]
    await queue.enqueue_many(backlog)
    urgent = [EnqueueRequest("work", {"urgent": n}, priority=10) for n in range(20)]
    await queue.enqueue_many(urgent)

    def all_urgent_done(completed: list[Job]) -> bool:
        return sum(job.priority == 10 for job in completed) == 20

    completed = await drain_in_order(store, 220, concurrency=2, until=all_urgent_done)
    assert all_urgent_done(completed)
    backlog_done = sum(job.priority == 0 for job in completed)
    print(f"all 20 urgent jobs done after {backlog_done} of the 200 backlog jobs")
    assert backlog_done < 120, backlog_done


async def test_lanes_keep_leaving_room_for_the_backlog(store: SqsJobStore) -> None:
    """The starvation guard: at least one job in SHARE comes from the queue's backlog."""
    queue = JobQueue(store)
    await queue.enqueue_many([EnqueueRequest("work", {"n": n}) for n in range(10)])
    await queue.enqueue_many([EnqueueRequest("work", {"u": n}, priority=5) for n in range(60)])

    def enough(completed: list[Job]) -> bool:
        return len(completed) == 3 * SHARE

    completed = await drain_in_order(store, 70, concurrency=1, until=enough)
    backlog = [job for job in completed[: 3 * SHARE] if job.priority == 0]
    assert len(backlog) >= 3, [job.priority for job in completed]
    # ... and the lane still comes first: most of those jobs are urgent ones.
    assert len(backlog) <= 6, [job.priority for job in completed]


async def test_an_urgent_job_is_sent_to_its_queue_and_its_lane(store: SqsJobStore) -> None:
    calls = record_calls(store)
    queue = JobQueue(store)
    await queue.enqueue("work", {"n": 1})
    await queue.enqueue("work", {"n": 2}, priority=3)
    await queue.enqueue_many([EnqueueRequest("work", {"n": n}, priority=n % 2) for n in range(4)])
    entry, lane = store.queue_urls["default"], lane_of(store)
    assert calls == [
        ("send_message", entry),
        ("send_message", entry),
        ("send_message", lane),
        ("send_message_batch", entry),
        ("send_message_batch", lane),
    ]


async def test_a_job_claimed_from_its_lane_settles_there(store: SqsJobStore, sqs: Any) -> None:
    queue = JobQueue(store)
    urgent = (await queue.enqueue("work", {"n": 1}, priority=2)).job
    calls = record_calls(store)
    [claimed] = await store.claim("default", "w1", queue.clock())
    assert claimed.id == urgent.id
    assert calls[0] == ("receive_message", lane_of(store))
    assert await store.complete(claimed.id, claimed.lease_token or "", queue.clock(), None)
    await store.aclose()  # sends the batched delete
    attributes = sqs.get_queue_attributes(
        QueueUrl=lane_of(store),
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    assert attributes == {
        "ApproximateNumberOfMessages": "0",
        "ApproximateNumberOfMessagesNotVisible": "0",
    }
    # Its copy on the queue is still there: the next claim finds the job completed and
    # deletes it without a run.
    entry = sqs.get_queue_attributes(
        QueueUrl=store.queue_urls["default"], AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    assert entry == {"ApproximateNumberOfMessages": "1"}


async def test_an_idle_worker_long_polls_the_queue_alone(aws_endpoint: str, prefix: str) -> None:
    store = SqsJobStore.create(prefix, endpoint_url=aws_endpoint, wait_time=1.0)
    calls = record_calls(store)
    try:
        worker = JobWorker(JobQueue(store), {"work": lambda ctx: None}, queues=["default"])
        async with worker:
            await asyncio.sleep(4.5)
    finally:
        await store.aclose()
    receives = [url for action, url in calls if action == "receive_message"]
    entry, lane = store.queue_urls["default"], lane_of(store)
    # The lane once (a worker starts as if busy), then the queue's one-second long polls.
    assert receives[0] == lane
    assert receives[1:] and set(receives[1:]) == {entry}, receives
    assert len(receives[1:]) <= 5, receives


def test_lane_configuration_from_text_and_its_mistakes() -> None:
    assert parse_lanes("default@1=https://q/a,reports@10=https://q/b", "X") == {
        "default": {1: "https://q/a"},
        "reports": {10: "https://q/b"},
    }
    with pytest.raises(ValueError, match="queue@lowest priority=URL"):
        parse_lanes("default=https://q/a", "SQSJOBS_PRIORITY_LANES")
    base: dict[str, Any] = {"table_name": "t", "queue_urls": {"default": "https://q/d"}}
    with pytest.raises(ValueError, match="not one of default"):
        SqsJobStore(**base, priority_lanes={"other": {1: "https://q/l"}})
    with pytest.raises(ValueError, match="a queue of its own"):
        SqsJobStore(**base, priority_lanes={"default": {1: "https://q/d"}})
    with pytest.raises(ValueError, match="lowest priority must be an int >= 1"):
        SqsJobStore(**base, priority_lanes={"default": {0: "https://q/l"}})
    fifo = {"table_name": "t", "queue_urls": {"default": "https://q/d.fifo"}}
    with pytest.raises(ValueError, match="FIFO queue"):
        SqsJobStore(**fifo, priority_lanes={"default": {1: "https://q/l"}})
    with pytest.raises(ValueError, match="priority_bands"):
        SqsJobStore.create("x", priority_bands=(1, 1), endpoint_url="http://127.0.0.1:9")


def test_from_env_reads_the_lanes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SQSJOBS_TABLE", "jobs")
    monkeypatch.setenv("SQSJOBS_QUEUES", "default=https://q/d")
    monkeypatch.setenv("SQSJOBS_PRIORITY_LANES", "default@1=https://q/d-p1")
    store = SqsJobStore.from_env(region_name="us-east-1")
    assert store._state.layout.lanes == {"default": ((1, "https://q/d-p1"),)}


async def test_a_busy_worker_without_urgent_jobs_rarely_reads_the_lane(
    store: SqsJobStore,
) -> None:
    """A hundred default jobs: the lane is read at the start and at most once more."""
    calls = record_calls(store)
    await JobQueue(store).enqueue_many([EnqueueRequest("work", {"n": n}) for n in range(100)])
    await drain_in_order(store, 100, concurrency=10, until=lambda done: False)
    lane_reads = [
        url for action, url in calls if (action, url) == ("receive_message", lane_of(store))
    ]
    queue_reads = [c for c in calls if c == ("receive_message", store.queue_urls["default"])]
    assert 1 <= len(lane_reads) <= 2, (len(lane_reads), len(queue_reads))
