"""Building records from requests, and refusing bad requests before anything is written."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from sqsjobs import (
    EnqueueRequest,
    JobConfigError,
    JobFilter,
    JobQueue,
    JobStatus,
    MemoryJobStore,
    SyncJobQueue,
)
from sqsjobs.core.idempotency import fingerprint
from sqsjobs.producer.enqueue import list_filter, prepare, prepare_many

from ..support.config import NOW, make_config


def test_prepare_builds_a_queued_record_with_the_queue_defaults() -> None:
    config = make_config(
        default_queue="other", default_max_attempts=3, default_timeout=7.0, default_lease=9.0
    )
    prepared = prepare(config, EnqueueRequest("email.send", {"to": "a@b.c"}), NOW)
    job = prepared.job
    at = datetime.fromtimestamp(NOW, UTC)
    assert job.model_dump(exclude={"id"}) == {
        "queue": "other",
        "name": "email.send",
        "payload": {"to": "a@b.c"},
        "status": JobStatus.QUEUED,
        "attempts": 0,
        "max_attempts": 3,
        "run_at": at,
        "created_at": at,
        "updated_at": at,
        "lease_until": None,
        "locked_by": None,
        "lease_token": None,
        "lease": 9.0,
        "timeout": 7.0,
        "priority": 0,
        "idempotency_key": None,
        "tenant": None,
        "last_error": None,
        "completed_at": None,
        "result": None,
        "group": "queue:other",  # no group nor tenant: the queue's own group
        "trace_context": None,  # set by the enqueue span when the producer traces
        "last_traceback": None,
        "history": [],  # nothing has happened to it yet
        "history_count": 0,
        "labels": {},
        "after": [],  # no parents: it does not wait
        "children": [],  # nor does anything wait for it
        "batch_id": None,  # not enqueued as part of a batch
        "batch_callback": None,
        "progress": None,  # until a run reports any
        "debounce_key": None,
    }
    assert len(job.id) == 32
    assert prepared.fingerprint is None


def test_prepare_options_override_the_defaults() -> None:
    request = EnqueueRequest(
        "a", None, queue="q", priority=4, max_attempts=1, timeout=0, lease=2.5, tenant="acme"
    )
    job = prepare(make_config(), request, NOW).job
    assert (job.queue, job.priority, job.max_attempts, job.timeout, job.lease, job.tenant) == (
        "q",
        4,
        1,
        0.0,
        2.5,
        "acme",
    )


def test_prepare_gives_every_job_a_new_id() -> None:
    first, second = prepare_many(make_config(), [EnqueueRequest("a")] * 2, NOW)
    assert first.job.id != second.job.id


def test_keyed_request_carries_the_fingerprint_of_name_tenant_and_plain_payload() -> None:
    request = EnqueueRequest("a", {"b": (1.0)}, idempotency_key="k", tenant="t1")
    prepared = prepare(make_config(), request, NOW)
    assert prepared.job.idempotency_key == "k"
    assert prepared.fingerprint == fingerprint("a", "t1", {"b": 1.0})


def test_prepare_many_validates_every_request_first() -> None:
    requests = [EnqueueRequest("a"), EnqueueRequest("b"), EnqueueRequest("bad name")]
    with pytest.raises(JobConfigError) as caught:
        prepare_many(make_config(), requests, NOW)
    assert caught.value.code == "invalid_name"


def test_prepare_many_rejects_items_that_are_not_requests() -> None:
    with pytest.raises(JobConfigError) as caught:
        prepare_many(make_config(), [EnqueueRequest("a"), {"name": "b"}], NOW)  # type: ignore[list-item]
    assert caught.value.code == "invalid_option"
    assert str(caught.value) == ("enqueue_many() item 1 is a dict; pass EnqueueRequest values")


# -- list() arguments -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "statuses"),
    [
        (None, None),
        (JobStatus.DEAD, frozenset({JobStatus.DEAD})),
        ("queued", frozenset({JobStatus.QUEUED})),
        (["queued", JobStatus.RUNNING], frozenset({JobStatus.QUEUED, JobStatus.RUNNING})),
        ((s for s in ["dead"]), frozenset({JobStatus.DEAD})),
        ([], frozenset()),
    ],
)
def test_list_filter_accepts_a_status_its_string_or_an_iterable(
    status: Any, statuses: frozenset[JobStatus] | None
) -> None:
    filter, limit = list_filter(queue="q", status=status, name="n", tenant="t", limit=10)
    assert filter == JobFilter(queue="q", statuses=statuses, name="n", tenant="t")
    assert limit == 10


@pytest.mark.parametrize("status", ["done", ["queued", "nope"], [None]])
def test_list_filter_rejects_unknown_statuses(status: Any) -> None:
    with pytest.raises(JobConfigError) as caught:
        list_filter(queue=None, status=status, name=None, tenant=None, limit=10)
    assert caught.value.code == "invalid_option"
    assert f"Invalid status filter {status!r}" in str(caught.value)
    assert "queued, delayed, running, completed, dead, cancelled" in str(caught.value)


@pytest.mark.parametrize("limit", [0, -1, 1001, True, 1.0, "10"])
def test_list_filter_rejects_limits_outside_1_to_1000(limit: Any) -> None:
    with pytest.raises(JobConfigError) as caught:
        list_filter(queue=None, status=None, name=None, tenant=None, limit=limit)
    assert caught.value.code == "invalid_option"
    assert str(caught.value) == f"Invalid limit {limit!r}: must be an int from 1 to 1000"


@pytest.mark.parametrize("limit", [1, 1000])
def test_list_filter_accepts_limits_1_to_1000(limit: int) -> None:
    assert list_filter(queue=None, status=None, name=None, tenant=None, limit=limit)[1] == limit


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("queue", "a b", "invalid_name"),
        ("name", "1x", "invalid_name"),
        ("tenant", "ACME", "invalid_option"),
    ],
)
def test_list_filter_validates_queue_name_and_tenant(field: str, value: str, code: str) -> None:
    arguments: dict[str, Any] = {"queue": None, "status": None, "name": None, "tenant": None}
    arguments[field] = value
    with pytest.raises(JobConfigError) as caught:
        list_filter(**arguments, limit=10)
    assert caught.value.code == code


# -- nothing is written when validation fails -------------------------------------------

BAD_REQUESTS = [
    pytest.param(EnqueueRequest("email\n"), "invalid_name", id="name"),
    pytest.param(EnqueueRequest("a", {1: "x"}), "invalid_payload", id="payload"),
    pytest.param(EnqueueRequest("a", "x" * 70_000), "payload_too_large", id="size"),
    pytest.param(EnqueueRequest("a", priority=True), "invalid_option", id="priority"),
]


@pytest.mark.parametrize(("request_", "code"), BAD_REQUESTS)
async def test_failed_enqueue_writes_nothing(request_: EnqueueRequest, code: str) -> None:
    store = MemoryJobStore(clock=lambda: NOW)
    queue = JobQueue(store, clock=lambda: NOW)
    with pytest.raises(JobConfigError) as caught:
        await queue.enqueue(request_.name, request_.payload, priority=request_.priority)
    assert caught.value.code == code
    assert list((await queue.list()).jobs) == []


@pytest.mark.parametrize(("request_", "code"), BAD_REQUESTS)
async def test_enqueue_many_with_a_bad_third_request_writes_nothing(
    request_: EnqueueRequest, code: str
) -> None:
    store = MemoryJobStore(clock=lambda: NOW)
    queue = JobQueue(store, clock=lambda: NOW)
    with pytest.raises(JobConfigError) as caught:
        await queue.enqueue_many([EnqueueRequest("a"), EnqueueRequest("b"), request_])
    assert caught.value.code == code
    assert list((await queue.list()).jobs) == []


@pytest.mark.parametrize(("request_", "code"), BAD_REQUESTS)
def test_sync_enqueue_many_with_a_bad_third_request_writes_nothing(
    request_: EnqueueRequest, code: str
) -> None:
    store = MemoryJobStore(clock=lambda: NOW)
    queue = SyncJobQueue(store, clock=lambda: NOW)
    with pytest.raises(JobConfigError) as caught:
        queue.enqueue_many([EnqueueRequest("a"), EnqueueRequest("b"), request_])
    assert caught.value.code == code
    with pytest.raises(JobConfigError):
        queue.enqueue(request_.name, request_.payload, priority=request_.priority)
    assert list(queue.list().jobs) == []
