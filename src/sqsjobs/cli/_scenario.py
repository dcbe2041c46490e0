"""The demo's scenario: a small shop's background jobs, enqueued as a realistic mix.

The handlers are written the way an application would write them. The plan covers
what a job system must get right: plain jobs, delayed ones, an idempotent duplicate, a
job that fails twice and then succeeds, poison jobs that dead-letter (a fatal error and
a job name nobody handles) and a cancelled one.

The scenario takes a ``JobQueue`` and nothing else, so it runs unchanged on the memory
store and on SQS + DynamoDB. It knows nothing of click or rich: progress goes to a
callback and the outcome comes back as values, which keeps it testable on its own.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import EnqueueRequest, EnqueueResult, Job, JobError, JobQueue, JobStatus, JobWorker
from ..core.lifecycle import TERMINAL
from ._demo_handlers import registry


class ScenarioTimeout(JobError):
    """The jobs did not all reach a terminal status in time; the message says how many."""


@dataclass(frozen=True)
class Step:
    """One enqueue of the plan, and what it shows."""

    what: str
    request: EnqueueRequest
    cancel: bool = False


def _email(to: str, template: str, **options: Any) -> EnqueueRequest:
    return EnqueueRequest("email.send", {"to": to, "template": template}, **options)


PLAN: tuple[Step, ...] = (
    Step("welcome email", _email("ana@example.com", "welcome", idempotency_key="welcome/ana")),
    Step(
        "same welcome email again (retried producer)",
        _email("ana@example.com", "welcome", idempotency_key="welcome/ana"),
    ),
    Step("order receipt", _email("ben@example.com", "receipt")),
    Step("avatar thumbnail", EnqueueRequest("image.resize", {"key": "ana.png", "width": 128})),
    Step(
        "product photo, high priority",
        EnqueueRequest("image.resize", {"key": "lamp.jpg", "width": 1024}, priority=10),
    ),
    Step(
        "monthly report (warehouse times out twice)",
        EnqueueRequest("report.build", {"report": "sales", "month": "2024-05"}),
    ),
    Step(
        "invoice charge", EnqueueRequest("invoice.charge", {"invoice": "inv_1001", "cents": 4200})
    ),
    Step(
        "invoice with a negative amount (fatal)",
        EnqueueRequest("invoice.charge", {"invoice": "inv_1002", "cents": -500}),
    ),
    Step("job name with no handler", EnqueueRequest("legacy.export", {"since": "2019-01-01"})),
    Step("cart reminder in 1.5 s", _email("cy@example.com", "cart-reminder", delay=1.5)),
    Step(
        "banner resize in 2.5 s",
        EnqueueRequest("image.resize", {"key": "banner.png", "width": 1920}, delay=2.5),
    ),
    Step(
        "newsletter in an hour, then cancelled",
        _email("dee@example.com", "newsletter", delay=3600),
        cancel=True,
    ),
)


@dataclass(frozen=True)
class Enqueued:
    step: Step
    result: EnqueueResult
    cancelled: bool


@dataclass(frozen=True)
class Progress:
    """A snapshot of the scenario's jobs while the worker runs them."""

    total: int
    counts: Counter[JobStatus]

    @property
    def done(self) -> int:
        return sum(self.counts[status] for status in TERMINAL)


async def enqueue_plan(queue: JobQueue, plan: Sequence[Step] = PLAN) -> list[Enqueued]:
    """Enqueue the plan in one batch, then cancel the steps that ask for it.

    One batch shows that a repeated idempotency key inside a batch resolves in order:
    the second welcome email comes back as the first one's job with ``duplicate=True``.
    """
    results = await queue.enqueue_many(step.request for step in plan)
    enqueued = []
    for step, result in zip(plan, results, strict=True):
        cancelled = step.cancel and await queue.cancel(result.job.id)
        enqueued.append(Enqueued(step, result, cancelled))
    return enqueued


def job_ids(enqueued: Sequence[Enqueued]) -> list[str]:
    """Each distinct job once, in enqueue order (a duplicate adds no job)."""
    return list(dict.fromkeys(item.result.job.id for item in enqueued))


async def run_until_finished(
    queue: JobQueue,
    ids: Sequence[str],
    *,
    concurrency: int = 3,
    timeout: float = 60.0,
    interval: float = 0.1,
    on_progress: Callable[[Progress], None] = lambda _: None,
) -> list[Job]:
    """Run a worker until every job is completed, dead or cancelled; the final records."""
    async with JobWorker(queue, registry, concurrency=concurrency, poll_interval=interval):
        return await _poll_until_finished(queue, ids, timeout, interval, on_progress)


async def _poll_until_finished(
    queue: JobQueue,
    ids: Sequence[str],
    timeout: float,
    interval: float,
    on_progress: Callable[[Progress], None],
) -> list[Job]:
    deadline = time.monotonic() + timeout
    while True:
        jobs = await _read_all(queue, ids)
        progress = Progress(len(ids), Counter(job.status for job in jobs))
        on_progress(progress)
        if progress.done == len(ids):
            return jobs
        if time.monotonic() >= deadline:
            pending = ", ".join(
                f"{count} {status}"
                for status, count in sorted(progress.counts.items())
                if status not in TERMINAL
            )
            raise ScenarioTimeout(
                f"The demo's jobs did not finish within {timeout:g}s ({pending} left); "
                "raise --timeout or run with --debug to see every job event"
            )
        await asyncio.sleep(interval)


async def _read_all(queue: JobQueue, ids: Sequence[str]) -> list[Job]:
    jobs = await asyncio.gather(*(queue.get(job_id) for job_id in ids))
    missing = [job_id for job_id, job in zip(ids, jobs, strict=True) if job is None]
    if missing:
        raise LookupError(f"Job {missing[0]} vanished from the store while the demo ran")
    return [job for job in jobs if job is not None]
