"""JobsLifespan under a real Starlette app and its test client (which runs the lifespan)."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from sqsjobs import JobContext, JobQueue, JobStatus, JobWorker, MemoryJobStore
from sqsjobs.contrib.asgi import JobsLifespan, looks_like_production


async def signup(request: Request) -> JSONResponse:
    queue: JobQueue = request.state.jobs
    body = await request.json()
    result = await queue.enqueue("email.welcome", {"to": body["email"]})
    return JSONResponse({"job_id": result.job.id})


def app_with(queue: JobQueue, worker: JobWorker | None, **options: object) -> JobsLifespan:
    starlette = Starlette(routes=[Route("/signup", signup, methods=["POST"])])
    return JobsLifespan(starlette, queue, worker=worker, production=False, **options)  # type: ignore[arg-type]


def test_requests_enqueue_and_the_worker_runs_beside_the_app() -> None:
    sent: list[str] = []

    async def welcome(payload: dict[str, str]) -> None:
        sent.append(payload["to"])

    queue = JobQueue(MemoryJobStore())
    worker = JobWorker(queue, {"email.welcome": welcome})
    with TestClient(app_with(queue, worker)) as client:
        job_id = client.post("/signup", json={"email": "a@example.com"}).json()["job_id"]
        deadline = time.monotonic() + 5
        while not sent and time.monotonic() < deadline:
            time.sleep(0.01)
        assert worker.state.running
    assert sent == ["a@example.com"]
    assert not worker.state.running
    job = queue.store.sync.get(job_id, time.time())  # type: ignore[attr-defined]
    assert job.status is JobStatus.COMPLETED


def test_shutdown_releases_a_job_that_outlives_the_grace() -> None:
    started = asyncio.Event()

    async def long(ctx: JobContext) -> None:
        started.set()
        await asyncio.sleep(60)

    queue = JobQueue(MemoryJobStore())
    worker = JobWorker(queue, {"email.welcome": long})
    with TestClient(app_with(queue, worker, grace=0.05)) as client:
        job_id = client.post("/signup", json={"email": "b@example.com"}).json()["job_id"]
        deadline = time.monotonic() + 5
        while worker.state.in_flight == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
    job = queue.store.sync.get(job_id, time.time())  # type: ignore[attr-defined]
    assert (job.status, job.attempts, job.last_error) == (
        JobStatus.QUEUED,
        0,
        "worker is stopping",
    )


def test_a_queue_without_a_worker_only_enqueues() -> None:
    queue = JobQueue(MemoryJobStore())
    with TestClient(app_with(queue, None)) as client:
        job_id = client.post("/signup", json={"email": "c@example.com"}).json()["job_id"]
    job = queue.store.sync.get(job_id, time.time())  # type: ignore[attr-defined]
    assert job.status is JobStatus.QUEUED


def test_a_worker_on_another_queue_is_refused() -> None:
    queue = JobQueue(MemoryJobStore())
    other = JobWorker(JobQueue(MemoryJobStore()), {"a": lambda ctx: None})
    with pytest.raises(ValueError, match="same JobQueue"):
        JobsLifespan(Starlette(), queue, worker=other)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, False),
        ({"APP_ENV": "development"}, False),
        ({"SQSJOBS_ENV": "production"}, True),
        ({"ENV": "PROD"}, True),
        ({"AWS_EXECUTION_ENV": "AWS_ECS_FARGATE"}, True),
    ],
)
def test_production_detection(environ: dict[str, str], expected: bool) -> None:
    assert looks_like_production(environ) is expected


def test_memory_store_in_production_warns(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="sqsjobs"):
        JobsLifespan(Starlette(), JobQueue(MemoryJobStore()), production=True)
        JobsLifespan(Starlette(), JobQueue(MemoryJobStore()), production=False)
    events = [r.__dict__.get("event") for r in caplog.records]
    assert events == ["jobs.memory_store_in_production"]
