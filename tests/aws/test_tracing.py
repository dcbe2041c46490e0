"""Trace context across SqsJobStore on the emulator: written on the item, linked by the run."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import boto3
from opentelemetry.trace import SpanKind

from sqsjobs import JobQueue, JobStatus, JobWorker, SyncJobQueue
from sqsjobs.aws import SqsJobStore

from ..support.tracing import Spans, spans, traceparent

__all__ = ["spans"]  # the fixture, imported for these tests


async def test_the_run_on_sqs_links_to_the_enqueue_span_written_on_the_item(
    store: SqsJobStore, aws_endpoint: str, spans: Spans
) -> None:
    producer = SyncJobQueue(store)  # the blocking producer, as a web view would enqueue
    with spans.provider.get_tracer("app").start_as_current_span("POST /orders"):
        job = producer.enqueue("invoice.render", {"order": "Nº 1796"}, tenant="malmo-4").job
    [send] = spans.named("send default")
    assert send.kind is SpanKind.PRODUCER
    table = boto3.client("dynamodb", endpoint_url=aws_endpoint)
    try:
        item = table.get_item(TableName=store.table_name, Key={"pk": {"S": f"job#{job.id}"}})
    finally:
        table.close()
    assert item["Item"]["trace_context"] == {"S": f'{{"traceparent": "{traceparent(send)}"}}'}

    worker = JobWorker(JobQueue(store), {"invoice.render": lambda payload: "rendered"})
    worker.start()
    try:
        deadline = time.monotonic() + 20
        while not spans.named("process default"):
            assert time.monotonic() < deadline, "the job never ran"
            await asyncio.sleep(0.1)
    finally:
        await worker.stop()
    [process] = spans.named("process default")
    assert process.kind is SpanKind.CONSUMER
    [link] = process.links
    assert (link.context.trace_id, link.context.span_id) == (
        send.get_span_context().trace_id,
        send.get_span_context().span_id,
    )
    attributes: dict[str, Any] = dict(process.attributes or {})
    assert attributes["messaging.message.id"] == job.id
    assert attributes["sqsjobs.job.outcome"] == "completed"
    done = await JobQueue(store).get(job.id)
    assert done is not None and done.status is JobStatus.COMPLETED
    assert done.trace_context == {"traceparent": traceparent(send)}


async def test_an_untraced_enqueue_writes_no_attribute(
    store: SqsJobStore, aws_endpoint: str
) -> None:
    job = (await JobQueue(store).enqueue("invoice.render", {"order": "Nº 1797"})).job
    table = boto3.client("dynamodb", endpoint_url=aws_endpoint)
    try:
        item = table.get_item(TableName=store.table_name, Key={"pk": {"S": f"job#{job.id}"}})
    finally:
        table.close()
    assert "trace_context" not in item["Item"]
