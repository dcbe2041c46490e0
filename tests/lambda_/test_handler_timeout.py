"""The Lambda handler applies the record's timeout as the worker does (one run path), and
warns as it does when the record missed what the handler declares."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from sqsjobs import JobContext, JobRegistry, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_lambda_handler
from sqsjobs.observe.log import Event
from sqsjobs.worker import declared_options

from .conftest import Context, receive_event


def slow_registry(timeout: float) -> JobRegistry:
    registry = JobRegistry()

    @registry.handler("video.transcode", timeout=timeout)
    async def transcode(ctx: JobContext) -> str:
        await asyncio.sleep(3.0)
        return "transcoded"

    return registry


def test_the_records_timeout_applies_not_the_handlers(
    store: SqsJobStore,
    sqs: Any,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(declared_options, "warned", set())  # a fresh Lambda container
    caplog.set_level(logging.WARNING, logger="sqsjobs")
    queue = SyncJobQueue(store, default_timeout=0.3)  # no registry: its own default
    job = queue.enqueue("video.transcode", {"título": "Año nuevo"}, max_attempts=1).job
    handler = make_lambda_handler(slow_registry(timeout=600), store=store)
    assert handler(receive_event(sqs, store.queue_urls["default"], 1), Context()) == {
        "batchItemFailures": []  # dead: sent to the DLQ, so Lambda may delete the message
    }
    dead = queue.get(job.id)
    assert dead is not None and dead.status is JobStatus.DEAD
    assert dead.last_error == "JobTimeoutError: Job exceeded its timeout of 0.3s and was cancelled."
    assert [r for r in caplog.records if r.__dict__.get("event") == Event.OPTIONS_DEFAULTED] == []


def test_a_record_holding_the_library_defaults_is_warned_about(
    store: SqsJobStore,
    sqs: Any,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(declared_options, "warned", set())
    caplog.set_level(logging.WARNING, logger="sqsjobs")
    queue = SyncJobQueue(store)  # no registry: the record says 30 s, by default
    job = queue.enqueue("video.transcode", None).job
    handler = make_lambda_handler(slow_registry(timeout=0.3), store=store)
    handler(receive_event(sqs, store.queue_urls["default"], 1), Context())
    done = queue.get(job.id)
    assert done is not None and (done.status, done.result) == (JobStatus.COMPLETED, "transcoded")
    (warning,) = [r for r in caplog.records if r.__dict__.get("event") == Event.OPTIONS_DEFAULTED]
    assert (warning.__dict__["applied"], warning.__dict__["declared"]) == (
        {"timeout": 30.0},
        {"timeout": 0.3},
    )
