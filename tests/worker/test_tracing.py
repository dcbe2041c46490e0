"""OpenTelemetry over the memory store: enqueue spans, run spans linked to them, no-op cost."""

from __future__ import annotations

import subprocess
import sys

from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from sqsjobs import EnqueueRequest, JobContext, JobFatalError, JobWorker

from ..support.tracing import Spans, spans, traceparent
from .conftest import Env

__all__ = ["spans"]  # the fixture, imported for these tests


def render(payload: dict[str, str]) -> str:
    """A sync handler: it runs in a worker thread, and its span still nests in the run's."""
    with trace.get_tracer_provider().get_tracer("app").start_as_current_span("render"):
        return f"Hello {payload['name']}"


async def test_a_run_span_links_to_the_enqueue_span_through_the_record(
    env: Env, spans: Spans
) -> None:
    tracer = spans.provider.get_tracer("app")
    with tracer.start_as_current_span("POST /signup") as request:
        job = (await env.queue.enqueue("welcome", {"name": "Zoë"}, tenant="acme")).job
    [send] = spans.named("send default")
    assert send.kind is SpanKind.PRODUCER
    assert send.parent is not None and send.parent.span_id == request.get_span_context().span_id
    assert dict(send.attributes or {}) == {
        "messaging.system": "sqsjobs",
        "messaging.operation.type": "send",
        "messaging.operation.name": "send",
        "messaging.destination.name": "default",
        "messaging.message.id": job.id,
        "sqsjobs.job.name": "welcome",
    }
    assert job.trace_context == {"traceparent": traceparent(send)}
    stored = await env.queue.get(job.id)
    assert stored is not None and stored.trace_context == job.trace_context

    worker = JobWorker(env.queue, {"welcome": render}, worker_id="worker-ümea")
    assert await worker.run_once()
    [process] = spans.named("process default")
    assert process.kind is SpanKind.CONSUMER
    assert process.parent is None  # linked, not a child: the run is a trace of its own
    [link] = process.links
    assert link.context.span_id == send.get_span_context().span_id
    assert link.context.trace_id == send.get_span_context().trace_id
    assert dict(process.attributes or {}) == {
        "messaging.system": "sqsjobs",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": "default",
        "messaging.message.id": job.id,
        "messaging.consumer.group.name": "worker-ümea",
        "sqsjobs.job.name": "welcome",
        "sqsjobs.job.attempt": 1,
        "sqsjobs.job.outcome": "completed",
    }
    assert process.status.status_code is StatusCode.UNSET
    [inner] = spans.named("render")
    assert inner.parent is not None
    assert inner.parent.span_id == process.get_span_context().span_id


async def test_failed_runs_record_their_exception_and_outcome(env: Env, spans: Spans) -> None:
    async def sync_ledger(ctx: JobContext) -> None:
        if ctx.attempt == 1:
            raise ConnectionResetError("ledger went away")
        raise JobFatalError("ledger rejected entry 42")

    job = (await env.queue.enqueue("ledger.sync", {"entry": 42}, max_attempts=3)).job
    worker = JobWorker(env.queue, {"ledger.sync": sync_ledger})
    assert await worker.run_once()
    env.clock.advance(1.0)
    assert await worker.run_once()
    first, second = spans.named("process default")
    assert [dict(s.attributes or {})["sqsjobs.job.attempt"] for s in (first, second)] == [1, 2]
    outcomes = [dict(s.attributes or {})["sqsjobs.job.outcome"] for s in (first, second)]
    assert outcomes == ["retried", "dead"]
    fatal = "sqsjobs.core.errors.JobFatalError"
    for span, kind in ((first, "ConnectionResetError"), (second, fatal)):
        assert span.status.status_code is StatusCode.ERROR
        [event] = span.events
        assert event.name == "exception"
        assert event.attributes is not None and event.attributes["exception.type"] == kind
        assert span.attributes is not None and span.attributes["error.type"] == kind
    [send] = spans.named("send default")
    assert all(
        s.links[0].context.span_id == send.get_span_context().span_id for s in (first, second)
    )
    assert job.trace_context is not None


async def test_a_batch_enqueue_is_one_span_every_job_links_to(env: Env, spans: Spans) -> None:
    requests = [EnqueueRequest("resize", {"w": w}, queue="images") for w in (320, 640, 1280)]
    jobs = [result.job for result in await env.queue.enqueue_many(requests)]
    [send] = spans.named("send images")
    assert send.attributes is not None and send.attributes["messaging.batch.message_count"] == 3
    assert {job.trace_context["traceparent"] for job in jobs if job.trace_context} == {
        traceparent(send)
    }


async def test_without_a_tracer_provider_nothing_is_traced_or_written(env: Env) -> None:
    job = (await env.queue.enqueue("welcome", {"name": "Åsa"})).job
    assert job.trace_context is None
    worker = JobWorker(env.queue, {"welcome": render})
    assert await worker.run_once()
    done = await env.queue.get(job.id)
    assert done is not None and done.trace_context is None and done.result == "Hello Åsa"


def test_a_process_that_never_imports_opentelemetry_runs_jobs_without_it() -> None:
    code = """
import asyncio, io, sys
from sqsjobs import EmfMetrics, JobQueue, JobWorker, MemoryJobStore

async def main():
    queue = JobQueue(MemoryJobStore())
    job = (await queue.enqueue("a", {"n": 1})).job
    emf = EmfMetrics(stream=io.StringIO())
    worker = JobWorker(queue, {"a": lambda payload: payload["n"]}, metrics=emf)
    assert await worker.run_once()
    done = await queue.get(job.id)
    print(done.result, done.trace_context, sorted(m for m in sys.modules
          if m.startswith(("opentelemetry", "prometheus_client"))))

asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1 None []"
