"""A retry is logged with the delay it gets, not the one asked for.

SQS hides a message for whole seconds, so on the SQS store a backoff of 0.02 s brings
the job back a second later; the log said "retrying in 0.020s". The memory store
carries out any delay exactly.
"""

from __future__ import annotations

import logging
import time

import pytest

from sqsjobs import Backoff, JobContext, JobQueue, JobWorker, MemoryJobStore
from sqsjobs.aws import SqsJobStore

SHORT = Backoff(base=0.02, max=0.02, random=lambda: 1.0)


def retried(caplog: pytest.LogCaptureFixture) -> logging.LogRecord:
    [record] = [r for r in caplog.records if r.__dict__.get("event") == "jobs.retry"]
    return record


def flaky(ctx: JobContext) -> None:
    raise ConnectionResetError("smtp.example.org reset the connection")


async def test_the_sqs_store_logs_whole_seconds(
    store: SqsJobStore, caplog: pytest.LogCaptureFixture
) -> None:
    queue = JobQueue(store, backoff=SHORT)
    job = (await queue.enqueue("mail.send", {"to": "ana@example.org"}, max_attempts=3)).job
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await JobWorker(queue, {"mail.send": flaky}).run_once()
    record = retried(caplog)
    assert f"({job.id}) failed; retrying in 1.000s" in record.getMessage()
    assert record.__dict__["delay"] == 1.0
    assert store.effective_delay(0.0) == 0.0 and store.effective_delay(60.0004) == 60.0


async def test_the_memory_store_logs_the_delay_as_asked(caplog: pytest.LogCaptureFixture) -> None:
    queue = JobQueue(MemoryJobStore(clock=time.time), backoff=SHORT)
    await queue.enqueue("mail.send", {"to": "ana@example.org"}, max_attempts=3)
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        assert await JobWorker(queue, {"mail.send": flaky}).run_once()
    assert "failed; retrying in 0.020s" in retried(caplog).getMessage()
