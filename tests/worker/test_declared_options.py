"""The record is the one source of truth: a run applies the record's options, and says so
when a record holds the library's defaults where its handler declares others."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from sqsjobs import Backoff, JobContext, JobQueue, JobRegistry, JobStatus, JobWorker
from sqsjobs.observe.log import Event
from sqsjobs.worker import declared_options

from .conftest import Env

REPORT = "reports.build"
TIMEOUT_ERROR = "JobTimeoutError: Job exceeded its timeout of {}s and was cancelled."


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Each test as a new worker process: no job name warned about yet."""
    monkeypatch.setattr(declared_options, "warned", set())
    caplog.set_level(logging.WARNING, logger="sqsjobs")


def warnings_logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.__dict__.get("event") == Event.OPTIONS_DEFAULTED]


def reports(**declared: Any) -> JobRegistry:
    registry = JobRegistry()

    @registry.handler(REPORT, **declared)
    async def build(payload: dict[str, Any], ctx: JobContext) -> str:
        await asyncio.sleep(payload.get("seconds", 0))
        return f"built {payload['mes']}"

    return registry


def plain_producer(env: Env, **options: Any) -> JobQueue:
    """A producer that never saw the registry, as another service or a script has."""
    return JobQueue(env.store, clock=env.clock, backoff=env.queue.backoff, **options)


async def run_all(env: Env, registry: JobRegistry) -> None:
    worker = JobWorker(env.queue, registry, clock=env.clock)
    while await worker.run_once():
        pass


async def test_the_records_timeout_cuts_a_run_the_handlers_would_allow(env: Env) -> None:
    # A defaulted (not explicit) record timeout of 0.05 s; the handler declares 10 minutes.
    producer = plain_producer(env, default_timeout=0.05)
    job = (await producer.enqueue(REPORT, {"mes": "mayo", "seconds": 5}, max_attempts=1)).job
    assert (job.timeout, job.timeout_explicit) == (0.05, False)
    await run_all(env, reports(timeout=600))
    dead = await env.queue.get(job.id)
    assert dead is not None and dead.status is JobStatus.DEAD
    assert dead.last_error == TIMEOUT_ERROR.format("0.05")


async def test_the_records_timeout_lets_a_run_go_past_the_handlers(env: Env) -> None:
    job = (await plain_producer(env).enqueue(REPORT, {"mes": "junio", "seconds": 0.2})).job
    await run_all(env, reports(timeout=0.05))  # the record says 30 s: that applies
    done = await env.queue.get(job.id)
    assert done is not None
    assert (done.status, done.result, done.timeout) == (JobStatus.COMPLETED, "built junio", 30.0)


async def test_the_records_max_attempts_applies_and_the_mismatch_is_logged(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    registry = JobRegistry()

    @registry.handler("emails.send", max_attempts=1)
    def send(payload: dict[str, str]) -> None:
        raise RuntimeError(f"SMTP refused {payload['to']}")

    job = (await plain_producer(env).enqueue("emails.send", {"to": "zoë@example.com"})).job
    await run_all(env, registry)
    retried = await env.queue.get(job.id)
    assert retried is not None and retried.max_attempts == 5
    assert (retried.status, retried.attempts) == (JobStatus.DELAYED, 1)  # 1 of the record's 5
    (warning,) = warnings_logged(caplog)
    assert warning.__dict__["applied"] == {"max_attempts": 5}
    assert warning.__dict__["declared"] == {"max_attempts": 1}


async def test_the_warning_names_the_job_both_values_and_the_fix_once_per_name(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    registry = reports(queue="default", max_attempts=3, timeout=120, lease=45)
    registry.add("reports.mail", lambda ctx: None, max_attempts=2)
    producer = plain_producer(env)
    for month in ("enero", "febrero", "marzo"):
        await producer.enqueue(REPORT, {"mes": month})
    await producer.enqueue("reports.mail", None)
    await run_all(env, registry)
    jobs = (await env.queue.list()).jobs
    assert [job.status for job in jobs] == [JobStatus.COMPLETED] * 4
    logged = {r.__dict__["job_name"]: r for r in warnings_logged(caplog)}
    assert len(warnings_logged(caplog)) == len(logged) == 2  # one per job name, not per job
    first, second = logged[REPORT], logged["reports.mail"]
    assert first.levelno == logging.WARNING
    assert first.__dict__["applied"] == {"max_attempts": 5, "timeout": 30.0, "lease": 30.0}
    assert first.__dict__["declared"] == {"max_attempts": 3, "timeout": 120.0, "lease": 45.0}
    message = first.getMessage()
    assert message.startswith(f"Job {REPORT!r} (")
    assert "runs with max_attempts=5, timeout=30s, lease=30s, the library's defaults" in message
    assert "its handler declares max_attempts=3, timeout=120s, lease=45s" in message
    assert "the record's apply" in message
    assert "give the producer registry=..." in message and "--app" in message
    assert "or pass the options at enqueue" in message
    assert second.__dict__["applied"] == {"max_attempts": 5}


async def test_a_declared_queue_the_record_missed_is_named_too(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    await plain_producer(env).enqueue(REPORT, {"mes": "abril"})  # lands on "default"
    await run_all(env, reports(queue="billing"))  # serves "default" and "billing"
    (warning,) = warnings_logged(caplog)
    assert (warning.__dict__["applied"], warning.__dict__["declared"]) == (
        {"queue": "default"},
        {"queue": "billing"},
    )
    assert "runs with queue='default'" in warning.getMessage()


async def test_no_warning_for_a_producer_given_the_registry(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    registry = reports(queue="billing", max_attempts=3, timeout=120, lease=45)
    producer = JobQueue(env.store, clock=env.clock, backoff=Backoff(), registry=registry)
    job = (await producer.enqueue(REPORT, {"mes": "julio"})).job
    assert (job.queue, job.max_attempts, job.timeout, job.lease) == ("billing", 3, 120.0, 45.0)
    await run_all(env, registry)
    assert warnings_logged(caplog) == []
    done = await env.queue.get(job.id)
    assert done is not None and done.status is JobStatus.COMPLETED


@pytest.mark.parametrize(
    "declared",
    [
        {},  # the handler declares nothing
        {"max_attempts": 5, "timeout": 30, "lease": 30},  # what the library would write
        {"timeout": 120},  # with the timeout the producer passed, 30 s on purpose
    ],
    ids=["nothing", "the-library-defaults", "an-explicit-timeout"],
)
async def test_no_warning_when_nothing_the_handler_declares_was_left_to_a_default(
    env: Env, caplog: pytest.LogCaptureFixture, declared: dict[str, Any]
) -> None:
    await plain_producer(env).enqueue(REPORT, {"mes": "agosto"}, timeout=30)
    await run_all(env, reports(**declared))
    assert warnings_logged(caplog) == []


async def test_values_the_producer_chose_are_not_reported(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    producer = plain_producer(env, default_max_attempts=7, default_lease=60)
    await producer.enqueue(REPORT, {"mes": "septiembre"}, timeout=10)
    await run_all(env, reports(max_attempts=3, timeout=120, lease=45))
    assert warnings_logged(caplog) == []
