"""``ctx.progress``: kept on the record, carried by the run's heartbeats and its outcome.

The run never writes progress on its own: a value waits for the next heartbeat, or for
the outcome if that comes first, and a value a heartbeat already carried is not written
again. So reporting progress adds no store call.
"""

from __future__ import annotations

from typing import Any

import pytest

from sqsjobs import JobConfigError, JobContext, JobQueue, JobStatus, JobWorker, MemoryJobStore

from ..support.clock import FakeClock
from .conftest import Env


class Recording(MemoryJobStore):
    """A memory store that notes every call after a claim, and the progress it carried."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        self.calls: list[tuple[str, Any]] = []

    async def heartbeat(self, *args: Any, **keywords: Any) -> bool:
        self.calls.append(("heartbeat", keywords.get("progress")))
        return await super().heartbeat(*args, **keywords)

    async def complete(self, *args: Any, **keywords: Any) -> bool:
        self.calls.append(("complete", keywords.get("progress")))
        return await super().complete(*args, **keywords)

    async def fail(self, *args: Any, **keywords: Any) -> bool:
        self.calls.append(("fail", keywords.get("progress")))
        return await super().fail(*args, **keywords)


@pytest.fixture
def recording(clock: FakeClock) -> tuple[Recording, JobQueue]:
    store = Recording(clock)
    return store, JobQueue(store, clock=clock)


async def run_one(queue: JobQueue, handler: Any, **options: Any) -> Any:
    job = (await queue.enqueue("report.build", {"month": "2026-11"}, **options)).job
    assert await JobWorker(queue, {"report.build": handler}).run_once()
    done = await queue.get(job.id)
    assert done is not None
    return done


async def test_progress_reported_before_any_heartbeat_rides_with_the_completion(
    recording: tuple[Recording, JobQueue],
) -> None:
    store, queue = recording

    async def build(ctx: JobContext) -> str:
        for done in range(1, 4):
            await ctx.progress({"done": done, "total": 3})
        return "s3://reports/2026-11.pdf"

    done = await run_one(queue, build)
    assert (done.status, done.progress) == (JobStatus.COMPLETED, {"done": 3, "total": 3})
    assert store.calls == [("complete", {"done": 3, "total": 3})]


async def test_a_heartbeat_carries_the_latest_value_once(
    recording: tuple[Recording, JobQueue],
) -> None:
    store, queue = recording

    async def build(ctx: JobContext) -> None:
        await ctx.progress(0.1)
        await ctx.progress(0.5)
        assert await ctx.heartbeat()
        assert (await queue.get(ctx.job.id)).progress == 0.5  # type: ignore[union-attr]
        assert await ctx.heartbeat()  # nothing new: carries nothing

    done = await run_one(queue, build)
    assert done.progress == 0.5
    assert store.calls == [("heartbeat", 0.5), ("heartbeat", None), ("complete", None)]


async def test_a_value_after_the_last_heartbeat_goes_with_the_failure(
    recording: tuple[Recording, JobQueue],
) -> None:
    store, queue = recording

    async def build(ctx: JobContext) -> None:
        await ctx.progress("rendering")
        assert await ctx.heartbeat()
        await ctx.progress("uploading")
        raise ConnectionError("upload refused")

    done = await run_one(queue, build, max_attempts=2)
    assert (done.status, done.progress) == (JobStatus.DELAYED, "uploading")
    assert store.calls == [("heartbeat", "rendering"), ("fail", "uploading")]


@pytest.mark.parametrize(
    ("value", "says"),
    [(None, "other than None"), ("ü" * 600, "1024 bytes"), ({"at": object()}, "not JSON")],
    ids=["none", "over-1-kib", "not-json"],
)
async def test_a_value_that_cannot_be_kept_is_refused_in_the_handler(
    env: Env, value: Any, says: str
) -> None:
    refused: list[JobConfigError] = []

    async def build(ctx: JobContext) -> str:
        try:
            await ctx.progress(value)
        except JobConfigError as error:
            refused.append(error)
        return "done anyway"

    done = await run_one(env.queue, build)
    [error] = refused
    assert error.code == "invalid_payload" and says in str(error)
    assert (done.status, done.progress) == (JobStatus.COMPLETED, None)


async def test_a_store_that_keeps_no_progress_says_so(env: Env) -> None:
    class Forgetful(MemoryJobStore):
        keeps_progress = False

    queue = JobQueue(Forgetful(clock=env.clock), clock=env.clock)
    refused: list[JobConfigError] = []

    async def build(ctx: JobContext) -> None:
        try:
            await ctx.progress(0.5)
        except JobConfigError as error:
            refused.append(error)

    await run_one(queue, build)
    [error] = refused
    assert error.code == "invalid_option" and "Forgetful does not keep progress" in str(error)
