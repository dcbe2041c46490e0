"""An OpenTelemetry SDK tracer provider whose spans a test can read back.

The provider is handed to sqsjobs the way an application's would be found, through
``opentelemetry.trace.get_tracer_provider``, patched for one test only: the global
provider can be set once per process, and the other suites must keep running untraced.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Spans:
    def __init__(self, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
        self.provider = provider
        self.exporter = exporter

    def finished(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.finished() if span.name == name]


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[Spans]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    yield Spans(provider, exporter)
    provider.shutdown()


def traceparent(span: ReadableSpan) -> str:
    context = span.get_span_context()
    assert context is not None
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"
