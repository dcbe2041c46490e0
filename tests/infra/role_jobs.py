"""The jobs the policy tests give each role to run, and how they wait for them.

Besides the everyday jobs, each role meets the items it writes least often, so that
every kind of item its policy lets it write (``job#``, ``body#``, ``limit#``,
``batch#``) is one its code was seen writing: a long payload (kept in a body item), a
job old enough that a claim or a retry must extend its body, a handler with a
fleet-wide limit, and composed jobs (``composed_jobs``): a chain, a fan-in, a child of
a job that dies, and batches with callbacks, one of them started by a handler. What a
crash between two steps leaves (``strand``) is the reconciler's to settle.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import boto3  # type: ignore[import-untyped]

from sqsjobs import Batch, EnqueueRequest, Job, JobContext, JobQueue, JobRegistry
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS
from sqsjobs.aws.wire.items import BODY_EXTEND_WITHIN, BODY_LIFE, item_from_job
from sqsjobs.testing.payloads import random_document

from .calls import Deployed
from .support import sample_job

LEASE = 5.0
# How far back an aged store's clock is: a job it enqueued has a body that a claim
# (or a retry) made now must extend, which it does for a body with less than
# BODY_EXTEND_WITHIN left of its BODY_LIFE.
AGE = BODY_LIFE - BODY_EXTEND_WITHIN + 86_400.0 + 0.37


def attachment(seed: int) -> dict[str, str]:
    """A payload that no compression fits in its record (base64 of random bytes)."""
    return random_document(3_000, seed)


def aged_clock() -> float:
    return time.time() - AGE


def aged_store(stack: Deployed) -> SqsJobStore:
    """A store whose clock is ``AGE`` seconds behind (give its queue the same clock,
    ``aged_clock``): the jobs enqueued through it are old."""
    return SqsJobStore.from_stack(stack.name, endpoint_url=stack.endpoint, clock=aged_clock)


class Ledger:
    """How each job ended, by name, as the worker's hooks tell it."""

    def __init__(self) -> None:
        self.finished: dict[str, str] = {}  # job name -> completed / dead
        self.dead: set[str] = set()  # job ids

    def handlers(self) -> dict[str, Callable[[JobContext], Any]]:
        async def ok(ctx: JobContext) -> int:
            return ctx.attempt

        async def flaky(ctx: JobContext) -> str:
            if ctx.attempt == 1:
                raise RuntimeError("the mail server said 451, try again")
            return "sent on the second try"

        async def doomed(ctx: JobContext) -> None:
            raise RuntimeError("card declined: expired")

        async def long(ctx: JobContext) -> str:
            assert await ctx.heartbeat()
            return "kept its lease"

        async def tick(ctx: JobContext) -> None:
            return None

        return {"ok": ok, "flaky": flaky, "doomed": doomed, "long": long, "tick": tick}

    def registry(self, queue: JobQueue) -> JobRegistry:
        """The handlers, one limited fleet-wide, and one that enqueues a follow-up job
        with a long payload through ``queue`` (a worker's handler is a producer too)."""
        registry = JobRegistry.from_handlers(self.handlers())

        async def capped(ctx: JobContext) -> str:
            assert await ctx.heartbeat()  # extends its limit slot too
            return "ran in one of two slots"

        async def fan_out(ctx: JobContext) -> str:
            payload = attachment(seed=ctx.attempt)
            # Urgent: its copy goes to the priority lane, from the worker's role.
            sent = await queue.enqueue("archive", payload, lease=LEASE, priority=7)
            return sent.job.id

        async def split(ctx: JobContext) -> str:
            # A handler's batch, with a callback, and a job that waits for this one.
            pieces = [EnqueueRequest("piece", {"n": n}, lease=LEASE) for n in range(2)]
            made = await queue.batch(pieces, on_complete=EnqueueRequest("pieced", lease=LEASE))
            await queue.enqueue("stitch", {"batch": made.id}, lease=LEASE, after=[ctx.job.id])
            return made.id

        async def joined(ctx: JobContext) -> int:
            # A child: every parent's result, read as its run starts.
            assert len(ctx.parent_results) == len(ctx.job.after) and ctx.batch is None
            return len(ctx.parent_results)

        async def callback(ctx: JobContext) -> int:
            # A batch's callback: its batch's figures, read as its run starts.
            assert ctx.batch is not None and ctx.batch.open == 0
            return ctx.batch.completed

        registry.add("capped", capped, concurrency=2)
        registry.add("fan_out", fan_out)
        registry.add("split", split)

        async def reindex(ctx: JobContext) -> str:
            # Merged from its burst's slot, which that ended: a handler's enqueue with
            # the key starts a new burst, writing the slot whole (a worker is a producer).
            later = await queue.enqueue("reindex_later", debounce_key="cat-w", debounce=3600)
            assert not later.duplicate and ctx.payload == {"rev": 2}
            return later.job.id

        registry.add("reindex", reindex)
        for name in ("archive", "aged", "extract", "part", "render", "piece"):
            registry.add(name, self.handlers()["ok"])
        for name in ("transform", "load", "merge", "orphan", "stitch"):
            registry.add(name, joined)
        for name in ("summary", "mail_all", "tally", "celebrate", "pieced"):
            registry.add(name, callback)
        return registry

    def on_complete(self, job: Job) -> None:
        self.finished[job.name] = "completed"

    def on_dead(self, job: Job, error: BaseException) -> None:
        self.finished[job.name] = "dead"
        self.dead.add(job.id)


def worker_jobs() -> list[EnqueueRequest]:
    return [
        EnqueueRequest("ok", {"n": 1}, lease=LEASE),
        # Urgent jobs: the worker claims them from the priority lane, where their
        # heartbeat, retry and completion act on the lane's messages.
        EnqueueRequest("flaky", {"to": "zoë@example.com"}, lease=LEASE, priority=3),
        EnqueueRequest("doomed", {"card": "…4242"}, lease=LEASE, max_attempts=1),
        EnqueueRequest("long", None, lease=LEASE, tenant="acme", priority=3),
        EnqueueRequest("capped", {"report": "2031-02"}, lease=LEASE, tenant="globex"),
        EnqueueRequest("fan_out", {"order": "ord-118"}, lease=LEASE),
    ]


COMPOSED = dict.fromkeys(
    [
        *("extract", "transform", "load", "part", "merge", "split", "piece", "pieced"),
        *("stitch", "render", "summary", "mail_all", "tally", "reindex"),
    ],
    "completed",
)  # how the composed jobs end, by name, as the ledger sees it (orphan, celebrate: cancelled)


async def composed_jobs(queue: JobQueue) -> dict[str, str]:
    """Jobs that wait for others, and batches, for a worker to run to the end: a chain,
    a fan-in, a child of a job that dies (cancelled with it), a batch that succeeds (both
    callbacks run) and one with a death (``on_success`` cancelled), and a handler that
    starts a batch of its own. The ids of the jobs that end cancelled."""
    # A debounced burst: the worker's claim merges its slot into the record first.
    for rev in (1, 2):
        await queue.enqueue(
            "reindex", {"rev": rev}, lease=LEASE, debounce_key="cat-w", debounce=0.3
        )
    extract = await queue.enqueue("extract", {"table": "orders"}, lease=LEASE)
    transform = await queue.enqueue("transform", lease=LEASE, after=[extract.job.id])
    await queue.enqueue("load", lease=LEASE, after=[transform.job.id])
    parts = await queue.enqueue_many([EnqueueRequest("part", {"n": n}) for n in range(3)])
    await queue.enqueue("merge", lease=LEASE, after=[part.job.id for part in parts])
    doomed = await queue.enqueue("doomed", {"card": "…0019"}, lease=LEASE, max_attempts=1)
    orphan = await queue.enqueue("orphan", lease=LEASE, after=[doomed.job.id])
    await queue.batch(
        [EnqueueRequest("render", {"invoice": n}, lease=LEASE) for n in range(3)],
        on_complete=EnqueueRequest("summary", {"month": "2031-02"}, lease=LEASE),
        on_success=EnqueueRequest("mail_all", lease=LEASE),
    )
    failing = await queue.batch(
        [
            EnqueueRequest("render", {"invoice": 4}, lease=LEASE),
            EnqueueRequest("doomed", {"card": "…0027"}, lease=LEASE, max_attempts=1),
        ],
        on_complete=EnqueueRequest("tally", lease=LEASE),
        on_success=EnqueueRequest("celebrate", lease=LEASE),
    )
    await queue.enqueue("split", {"order": "ord-119"}, lease=LEASE)
    return {"orphan": orphan.job.id, "celebrate": failing.callback_ids[1]}


async def strand(stack: Deployed, queue: JobQueue) -> tuple[str, Batch]:
    """What a worker killed between two steps leaves, for the reconciler: a child still
    waiting for a parent whose record says completed (the release never followed), and
    a batch whose only job's completion was never counted. Their parents and the job are
    delayed an hour, so no worker meets them first; the child's id, and the batch."""
    parent = await queue.enqueue("extract", delay=3600.25, lease=LEASE)
    child = await queue.enqueue("transform", lease=LEASE, after=[parent.job.id])
    batch = await queue.batch(
        [EnqueueRequest("render", delay=3600.25, lease=LEASE)],
        on_complete=EnqueueRequest("summary", lease=LEASE),
    )
    dynamodb = boto3.client("dynamodb", endpoint_url=stack.endpoint)
    for job_id in (parent.job.id, *batch.job_ids):
        dynamodb.update_item(
            TableName=stack.table,
            Key={"pk": {"S": f"job#{job_id}"}},
            UpdateExpression="SET #s = :c",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":c": {"S": "completed"}},
        )
    return child.job.id, batch


def write_without_message(stack: Deployed) -> None:
    """A record whose producer died before its send: the reconciler's to repair."""
    written = datetime.fromtimestamp(time.time() - 5.0, UTC)
    job = sample_job(uuid.uuid4().hex).model_copy(
        update={"created_at": written, "updated_at": written, "run_at": written}
    )
    item = item_from_job(job, None, DEFAULT_SHARDS)
    boto3.client("dynamodb", endpoint_url=stack.endpoint).put_item(TableName=stack.table, Item=item)


def minute_turning(seconds: float) -> Callable[[], float]:
    """A clock whose next minute starts ``seconds`` from now, so a cron tick comes soon."""
    offset = 60.0 - time.time() % 60.0 - seconds
    return lambda: time.time() + offset


def eventually(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> Awaitable[None]:
    async def wait() -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}")
            await asyncio.sleep(0.05)

    return wait()
