"""OpenTelemetry spans for enqueues and runs, used only when the application traces.

    enqueue ── PRODUCER span "send {queue}" ── its context is written on the record
                                               (``Job.trace_context``: W3C traceparent,
                                               tracestate) and so travels with the job
    run     ── CONSUMER span "process {queue}", one per attempt, *linked* to the enqueue
               span (not its child: a run may come hours later, in another process),
               current while the handler runs, so the handler's own spans nest in it

sqsjobs never imports OpenTelemetry itself. Tracing is on when the application has
imported ``opentelemetry.trace`` and set a tracer provider; otherwise each call here is
one dictionary lookup in ``sys.modules`` and returns at once: no import on a Lambda cold
start, no span objects, no context written on the record. Attribute names follow the
OpenTelemetry messaging semantic conventions where they fit (``messaging.*``); what they
have no name for (job name, attempt, outcome) is under ``sqsjobs.job.*``. The
messaging system is ``sqsjobs``, not ``aws_sqs``: the unit traced is the job record,
which the memory store carries as well as SQS.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..core.models import Job

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

TRACER_NAME = "sqsjobs"
SYSTEM = "sqsjobs"


def _tracer() -> Tracer | None:
    """The application's tracer, or None when it has no tracer provider (or no OpenTelemetry)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None  # nothing configured: every span would be a non-recording no-op
    tracer: Tracer = provider.get_tracer(TRACER_NAME)
    return tracer


class _Untraced:
    """``enqueue_span`` when tracing is off: a plain object, cheaper than a generator."""

    __slots__ = ("_jobs",)

    def __init__(self, jobs: list[Job]) -> None:
        self._jobs = jobs

    def __enter__(self) -> list[Job]:
        return self._jobs

    def __exit__(self, *exc_info: object) -> None:
        return None


def enqueue_span(jobs: list[Job]) -> contextlib.AbstractContextManager[list[Job]]:
    """Trace one enqueue call; the context gives ``jobs`` carrying the span's context."""
    tracer = _tracer()
    if tracer is None or not jobs:
        return _Untraced(jobs)
    return _enqueue_span(tracer, jobs)


@contextlib.contextmanager
def _enqueue_span(tracer: Tracer, jobs: Sequence[Job]) -> Iterator[list[Job]]:
    from opentelemetry import propagate, trace

    queues = {job.queue for job in jobs}
    attributes: dict[str, Any] = {
        "messaging.system": SYSTEM,
        "messaging.operation.type": "send",
        "messaging.operation.name": "send",
    }
    if len(queues) == 1:
        attributes["messaging.destination.name"] = jobs[0].queue
    if len(jobs) == 1:
        attributes["messaging.message.id"] = jobs[0].id
        attributes["sqsjobs.job.name"] = jobs[0].name
    else:
        attributes["messaging.batch.message_count"] = len(jobs)
    with tracer.start_as_current_span(
        f"send {jobs[0].queue}" if len(queues) == 1 else "send",
        kind=trace.SpanKind.PRODUCER,
        attributes=attributes,
    ):
        carrier: dict[str, str] = {}
        propagate.inject(carrier)  # the current span: this one
        context = {k: v for k, v in carrier.items() if k in ("traceparent", "tracestate")}
        yield [job.model_copy(update={"trace_context": context or None}) for job in jobs]


class RunSpan:
    """One run's CONSUMER span; every method is a no-op when tracing is off."""

    __slots__ = ("_span",)

    def __init__(self, span: Span | None) -> None:
        self._span = span

    @classmethod
    def start(cls, job: Job, worker_id: str) -> RunSpan:
        tracer = _tracer()
        if tracer is None:
            return cls(None)
        from opentelemetry import propagate, trace

        links = []
        if job.trace_context:
            producer = trace.get_current_span(propagate.extract(job.trace_context))
            if producer.get_span_context().is_valid:
                links.append(trace.Link(producer.get_span_context()))
        span = tracer.start_span(
            f"process {job.queue}",
            kind=trace.SpanKind.CONSUMER,
            links=links,
            attributes={
                "messaging.system": SYSTEM,
                "messaging.operation.type": "process",
                "messaging.operation.name": "process",
                "messaging.destination.name": job.queue,
                "messaging.message.id": job.id,
                "messaging.consumer.group.name": worker_id,
                "sqsjobs.job.name": job.name,
                "sqsjobs.job.attempt": job.attempts,
            },
        )
        return cls(span)

    @contextlib.contextmanager
    def current(self) -> Iterator[None]:
        """Make the span current, e.g. while the handler's task is created (it copies it)."""
        if self._span is None:
            yield
            return
        from opentelemetry import trace

        with trace.use_span(
            self._span, end_on_exit=False, record_exception=False, set_status_on_exception=False
        ):
            yield

    def end(self, outcome: str, error: BaseException | None) -> None:
        span = self._span
        if span is None:
            return
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute("sqsjobs.job.outcome", outcome)
        if error is not None:
            span.record_exception(error)
            kind = type(error)  # named as the SDK's exception.type names it
            name = (
                kind.__qualname__
                if kind.__module__ == "builtins"
                else f"{kind.__module__}.{kind.__qualname__}"
            )
            span.set_attribute("error.type", name)
            span.set_status(Status(StatusCode.ERROR, str(error)[:200]))
        span.end()
