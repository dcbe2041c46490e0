"""The jobs the policy tests give each role to run, and how they wait for them.

Besides the everyday jobs, each role meets the items it writes least often, so that
every kind of item its policy lets it write (``job#``, ``body#``, ``limit#``) is one its
code was seen writing: a long payload (kept in a body item), a job old enough that a
claim or a retry must extend its body, and a handler with a fleet-wide limit.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import boto3  # type: ignore[import-untyped]

from sqsjobs import EnqueueRequest, Job, JobContext, JobQueue, JobRegistry
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

        registry.add("capped", capped, concurrency=2)
        registry.add("fan_out", fan_out)
        registry.add("archive", self.handlers()["ok"])
        registry.add("aged", self.handlers()["ok"])
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
