"""Run metrics from a worker over the memory store: EMF lines and Prometheus series."""

from __future__ import annotations

import asyncio
import io
import uuid
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from sqsjobs import (
    EmfMetrics,
    JobConfigError,
    JobContext,
    JobFatalError,
    JobRegistry,
    JobWorker,
    PrometheusMetrics,
)

from ..support.emf import documents, totals, values
from .conftest import Env


def handlers() -> dict[str, Any]:
    def send(payload: dict[str, str]) -> str:
        return f"sent to {payload['to']}"

    async def build(ctx: JobContext) -> None:
        raise RuntimeError(f"report {ctx.job.payload} failed on attempt {ctx.attempt}")

    def charge(payload: dict[str, int]) -> None:
        raise JobFatalError(f"card declined for {payload['cents']} cents")

    return {"email.send": send, "report.build": build, "charge": charge}


async def run_scenario(env: Env, worker: JobWorker) -> None:
    """Two completions, one fatal dead job, and one retried then dead on its last attempt."""
    for to in ("zoë@example.com", "åsa@example.se"):
        await env.queue.enqueue("email.send", {"to": to}, tenant="acme")
    await env.queue.enqueue("charge", {"cents": 1999}, tenant="globex")
    await env.queue.enqueue("report.build", "q3-ünits", queue="reports", max_attempts=2)
    env.clock.advance(2.5)
    for _ in range(4):
        assert await worker.run_once()
    assert not await worker.run_once()  # the retry is not due for 1 s
    env.clock.advance(1.25)
    assert await worker.run_once()
    assert not await worker.run_once()


async def test_emf_lines_count_each_outcome_per_queue_and_job_name(env: Env) -> None:
    out = io.StringIO()
    worker = JobWorker(
        env.queue, handlers(), queues=["default", "reports"], metrics=EmfMetrics(stream=out)
    )
    await run_scenario(env, worker)
    docs = documents(out.getvalue())
    assert len(docs) == 10  # a start line and an end line per run
    counted = {key: value for key, value in totals(docs).items() if key[2].startswith("Jobs")}
    assert counted == {
        ("default", "email.send", "JobsStarted"): 2,
        ("default", "email.send", "JobsCompleted"): 2,
        ("default", "charge", "JobsStarted"): 1,
        ("default", "charge", "JobsDead"): 1,
        ("reports", "report.build", "JobsStarted"): 2,
        ("reports", "report.build", "JobsRetried"): 1,
        ("reports", "report.build", "JobsDead"): 1,
    }
    for document in docs:
        [directive] = document["_aws"]["CloudWatchMetrics"]
        assert directive["Dimensions"] == [["Queue", "JobName"], ["Queue"]]
    waits = {(d["JobName"], d["QueueWait"]) for d in docs if "QueueWait" in d}
    # From enqueue (2.5 s before the first claims), and for the retry from its run_at.
    assert {name for name, _ in waits} == {"email.send", "charge", "report.build"}
    for name, wait in waits:
        assert wait == pytest.approx(2.5, abs=1e-5) or (name, round(wait, 5)) == (
            "report.build",
            0.25,
        )
    ended = [d for d in docs if "Outcome" in d]
    assert sorted(d["Outcome"] for d in ended) == [
        "completed",
        "completed",
        "dead",
        "dead",
        "retried",
    ]
    assert all(duration >= 0 for duration in values(ended, "RunDuration"))


async def test_a_namespace_of_ones_own(env: Env) -> None:
    out = io.StringIO()
    worker = JobWorker(env.queue, handlers(), metrics=EmfMetrics("Billing/Jobs", stream=out))
    await env.queue.enqueue("email.send", {"to": "ops@example.com"})
    assert await worker.run_once()
    assert len(documents(out.getvalue(), namespace="Billing/Jobs")) == 2


async def test_metrics_are_off_unless_chosen(env: Env, capsys: pytest.CaptureFixture[str]) -> None:
    worker = JobWorker(env.queue, handlers())
    await env.queue.enqueue("email.send", {"to": "ops@example.com"})
    assert await worker.run_once()
    assert capsys.readouterr().out == ""


def test_an_unknown_metrics_output_is_refused(env: Env) -> None:
    with pytest.raises(JobConfigError, match="Invalid metrics 'statsd': use one of emf, prom"):
        JobWorker(env.queue, handlers(), metrics="statsd")  # type: ignore[arg-type]


def test_an_empty_namespace_is_refused() -> None:
    with pytest.raises(ValueError, match="Invalid metrics namespace ''"):
        EmfMetrics("")


async def test_prometheus_series_count_the_same_runs(env: Env) -> None:
    registry = CollectorRegistry()
    metrics = PrometheusMetrics(registry=registry)
    worker = JobWorker(env.queue, handlers(), queues=["default", "reports"], metrics=metrics)
    await run_scenario(env, worker)

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    assert sample("sqsjobs_jobs_started_total", queue="default", job="email.send") == 2
    assert sample("sqsjobs_jobs_started_total", queue="reports", job="report.build") == 2
    outcomes = "sqsjobs_job_outcomes_total"
    assert sample(outcomes, queue="default", job="email.send", outcome="completed") == 2
    assert sample(outcomes, queue="default", job="charge", outcome="dead") == 1
    assert sample(outcomes, queue="reports", job="report.build", outcome="retried") == 1
    assert sample(outcomes, queue="reports", job="report.build", outcome="dead") == 1
    assert sample(outcomes, queue="default", job="email.send", outcome="dead") is None
    wait = "sqsjobs_queue_wait_seconds"
    assert sample(f"{wait}_count", queue="reports", job="report.build") == 2
    assert sample(f"{wait}_sum", queue="reports", job="report.build") == pytest.approx(2.75)
    assert (
        sample(f"{wait}_bucket", queue="reports", job="report.build", le="0.5") == 1
    )  # the retry waited 0.25 s
    duration = "sqsjobs_run_duration_seconds_count"
    assert sample(duration, queue="default", job="email.send", outcome="completed") == 2
    # A second worker on the same registry shares the series instead of clashing.
    assert PrometheusMetrics(registry=registry).registry is registry


async def test_a_stop_counts_the_runs_it_released_even_a_stubborn_one(env: Env) -> None:
    """One run is interrupted and releases itself; one ignores cancellation and the drain
    releases it: both are counted released, once."""
    started = asyncio.Semaphore(0)
    done_ignoring = asyncio.Event()

    async def polite(ctx: JobContext) -> None:
        started.release()
        await asyncio.sleep(30)

    async def stubborn(ctx: JobContext) -> None:
        started.release()
        while not done_ignoring.is_set():
            try:
                await done_ignoring.wait()
            except asyncio.CancelledError:
                continue

    await env.queue.enqueue("export.csv", {"rows": 10_000})
    await env.queue.enqueue("import.legacy", {"file": "kunden-ä.xml"})
    out = io.StringIO()
    worker = JobWorker(
        env.queue,
        {"export.csv": polite, "import.legacy": stubborn},
        concurrency=2,
        metrics=EmfMetrics(stream=out),
    )
    worker.start()
    for _ in range(2):
        await started.acquire()
    await worker.stop(grace=0.05)
    done_ignoring.set()  # let the orphaned handler end so the event loop can close
    summed = totals(documents(out.getvalue()))
    released = {key: value for key, value in summed.items() if key[2] == "JobsReleased"}
    assert released == {
        ("default", "export.csv", "JobsReleased"): 1,
        ("default", "import.legacy", "JobsReleased"): 1,
    }


async def test_a_cancelled_run_and_a_lost_lease_are_counted_apart(env: Env) -> None:
    out = io.StringIO()
    started = asyncio.Event()

    async def transcode(ctx: JobContext) -> None:
        started.set()
        await asyncio.sleep(30)

    async def hog(ctx: JobContext) -> None:
        env.clock.advance(60)  # the lease ends while the handler runs: the next beat is refused
        await asyncio.sleep(30)

    handlers = {"video.transcode": transcode, "index.rebuild": hog}
    worker = JobWorker(env.queue, handlers, metrics=EmfMetrics(stream=out))
    cancelled = (await env.queue.enqueue("video.transcode", tenant="acme", lease=0.3)).job

    async def cancel_once_running() -> None:
        await started.wait()
        assert await env.queue.cancel(cancelled.id)

    canceller = asyncio.create_task(cancel_once_running())
    assert await asyncio.wait_for(worker.run_once(), 5)
    await canceller
    await env.queue.enqueue("index.rebuild", {"shard": "ø-3"}, lease=0.3)
    assert await asyncio.wait_for(worker.run_once(), 5)
    ended = {(d["JobName"], d["Outcome"]) for d in documents(out.getvalue()) if "Outcome" in d}
    assert ended == {("video.transcode", "cancelled"), ("index.rebuild", "lease_lost")}
    summed = totals(documents(out.getvalue()))
    assert summed[("default", "video.transcode", "JobsCancelled")] == 1
    assert summed[("default", "index.rebuild", "LeaseLost")] == 1


# -- names no handler is registered for -------------------------------------------------

# Whoever may enqueue chooses a job's name; as a label value or an EMF dimension each new
# one would be a new series (on CloudWatch, billed metrics), so these are measured as one.
UNREGISTERED = "(unregistered)"
UNKNOWN = [f"probe.{n:02d}-{uuid.uuid4().hex[:10]}" for n in range(50)]


async def enqueue_unknown_and_known(env: Env) -> None:
    for n, name in enumerate(UNKNOWN):
        await env.queue.enqueue(name, {"n": n, "note": "ünknown"}, tenant="evil")
    await env.queue.enqueue("email.send", {"to": "zoë@example.com"}, tenant="acme")
    env.clock.advance(1.75)


async def run_all(worker: JobWorker) -> None:
    for _ in range(len(UNKNOWN) + 1):
        assert await worker.run_once()
    assert not await worker.run_once()


async def test_unregistered_names_are_one_prometheus_series(env: Env) -> None:
    registry = CollectorRegistry()
    worker = JobWorker(env.queue, handlers(), metrics=PrometheusMetrics(registry=registry))
    await enqueue_unknown_and_known(env)
    await run_all(worker)

    def jobs_of(metric: str) -> set[str]:
        return {
            sample.labels["job"]
            for family in registry.collect()
            for sample in family.samples
            if sample.name.startswith(metric)
        }

    for metric in (
        "sqsjobs_jobs_started",
        "sqsjobs_job_outcomes",
        "sqsjobs_queue_wait_seconds",
        "sqsjobs_run_duration_seconds",
    ):
        assert jobs_of(metric) == {UNREGISTERED, "email.send"}, metric

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    unknown = {"queue": "default", "job": UNREGISTERED}
    assert sample("sqsjobs_jobs_started_total", **unknown) == 50
    assert sample("sqsjobs_job_outcomes_total", **unknown, outcome="dead") == 50
    assert sample("sqsjobs_queue_wait_seconds_count", **unknown) == 50
    assert sample("sqsjobs_queue_wait_seconds_sum", **unknown) == pytest.approx(50 * 1.75)
    known = {"queue": "default", "job": "email.send"}
    assert sample("sqsjobs_jobs_started_total", **known) == 1
    assert sample("sqsjobs_job_outcomes_total", **known, outcome="completed") == 1


async def test_unregistered_names_are_one_emf_dimension_value(env: Env) -> None:
    out = io.StringIO()
    worker = JobWorker(env.queue, handlers(), metrics=EmfMetrics(stream=out))
    await enqueue_unknown_and_known(env)
    await run_all(worker)
    docs = documents(out.getvalue())
    assert len(docs) == 2 * 51
    assert {d["JobName"] for d in docs} == {UNREGISTERED, "email.send"}
    summed = totals(docs)
    assert summed[("default", UNREGISTERED, "JobsStarted")] == 50
    assert summed[("default", UNREGISTERED, "JobsDead")] == 50
    assert summed[("default", "email.send", "JobsCompleted")] == 1
    assert {key[1] for key in summed} == {UNREGISTERED, "email.send"}


async def test_a_name_registered_after_the_worker_was_built_is_measured_by_name(
    env: Env,
) -> None:
    """The registry is read at each run, so a handler added later is not "unregistered"."""
    registry = JobRegistry()
    registry.add("email.send", handlers()["email.send"])
    out = io.StringIO()
    worker = JobWorker(env.queue, registry, metrics=EmfMetrics(stream=out))

    @registry.handler("invoice.render")
    def render(payload: dict[str, int]) -> int:
        return payload["n"] * 2

    await env.queue.enqueue("invoice.render", {"n": 21})
    await env.queue.enqueue("invoice.archive", {"n": 21})
    assert await worker.run_once() and await worker.run_once()
    names = sorted(d["JobName"] for d in documents(out.getvalue()))
    assert names == [UNREGISTERED, UNREGISTERED, "invoice.render", "invoice.render"]
