"""Pausing a queue (``queue.pause``, SPEC §7) on every store, through both producer faces:
a paused queue's claims find nothing, its enqueues are kept, and a resume lets them run."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sqsjobs import JobConfigError, JobQueue, JobStatus, SyncJobQueue

from .harness import Harness
from .support import claim, get, put


class Faces:
    """``pause``, ``resume`` and ``paused`` through the async queue or the blocking one."""

    def __init__(self, harness: Harness, face: str) -> None:
        self._async = JobQueue(harness.store, clock=harness.clock)
        self._blocking = SyncJobQueue(harness.store, clock=harness.clock)
        self._face = face

    async def call(self, name: str, *args: Any) -> Any:
        if self._face == "async":
            return await getattr(self._async, name)(*args)
        return await asyncio.to_thread(getattr(self._blocking, name), *args)


@pytest.fixture(params=["async", "blocking"])
def pause_face(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_a_paused_queue_keeps_its_jobs_and_a_resume_runs_them(
    harness: Harness, pause_face: str
) -> None:
    faces = Faces(harness, pause_face)
    assert await faces.call("paused") == frozenset()
    await faces.call("pause", "default")
    await faces.call("pause", "default")  # twice is once
    assert await faces.call("paused") == frozenset({"default"})
    job = await put(harness, payload={"rechnung": "RE-2026-0413"})  # enqueues are kept
    other = await put(harness, queue="other")
    assert await claim(harness) == []
    assert (await get(harness, job.id)).status is JobStatus.QUEUED
    assert [j.id for j in await claim(harness, "other")] == [other.id]  # only it is paused
    await faces.call("resume", "default")
    assert await faces.call("paused") == frozenset()
    assert [j.id for j in await claim(harness)] == [job.id]


async def test_an_invalid_queue_name_is_refused_before_anything_is_written(
    harness: Harness, pause_face: str
) -> None:
    faces = Faces(harness, pause_face)
    with pytest.raises(JobConfigError, match="queue name"):
        await faces.call("pause", "no such/queue")
    assert await faces.call("paused") == frozenset()
