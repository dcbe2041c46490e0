"""The producer façades, JobQueue and SyncJobQueue, over MemoryJobStore (SPEC §2.4, §2.8)."""

from __future__ import annotations

import asyncio
import base64
import inspect
import logging
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sqsjobs import (
    EnqueueRequest,
    EnqueueResult,
    Job,
    JobBatchError,
    JobConfigError,
    JobFilter,
    JobIdempotencyConflictError,
    JobPage,
    JobQueue,
    JobStatus,
    MemoryJobStore,
    SyncJobQueue,
)

from .support.clock import REALISTIC_START, FakeClock

T = REALISTIC_START
Queue = JobQueue | SyncJobQueue


async def call(value: Any) -> Any:
    """The result of a façade method, awaited when the façade is async."""
    return await value if inspect.isawaitable(value) else value


def at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


@pytest.fixture
def store(clock: FakeClock) -> MemoryJobStore:
    return MemoryJobStore(clock=clock)


@pytest.fixture(params=[JobQueue, SyncJobQueue], ids=["async", "sync"])
def queue(request: pytest.FixtureRequest, store: MemoryJobStore, clock: FakeClock) -> Queue:
    cls: type[Queue] = request.param
    return cls(store, clock=clock, default_max_attempts=4, default_lease=12.0)


# -- enqueue and get --------------------------------------------------------------------


async def test_enqueue_writes_a_queued_job(queue: Queue) -> None:
    result = await call(queue.enqueue("mail.send", {"to": "a@b.c"}))
    assert isinstance(result, EnqueueResult)
    assert result.duplicate is False
    job = result.job
    assert (job.name, job.queue, job.payload, job.status) == (
        "mail.send",
        "default",
        {"to": "a@b.c"},
        JobStatus.QUEUED,
    )
    assert (job.max_attempts, job.lease, job.timeout, job.attempts) == (4, 12.0, 30.0, 0)
    assert job.created_at == job.run_at == job.updated_at == at(T)
    assert await call(queue.get(job.id)) == job


async def test_enqueue_options_reach_the_record(queue: Queue) -> None:
    options: dict[str, Any] = {
        "queue": "other",
        "idempotency_key": "k",
        "tenant": "acme",
        "delay": 5,
        "priority": 3,
        "max_attempts": 1,
        "timeout": 2.0,
        "lease": 0.5,
    }
    job = (await call(queue.enqueue("a.b", [1], **options))).job
    assert (job.queue, job.idempotency_key, job.tenant, job.priority) == ("other", "k", "acme", 3)
    assert (job.status, job.run_at) == (JobStatus.DELAYED, at(T + 5))
    assert (job.max_attempts, job.timeout, job.lease) == (1, 2.0, 0.5)


async def test_enqueue_at_run_at(queue: Queue) -> None:
    job = (await call(queue.enqueue("a.b", run_at=at(T + 60)))).job
    assert (job.status, job.run_at) == (JobStatus.DELAYED, at(T + 60))


async def test_get_of_an_unknown_job_is_none(queue: Queue) -> None:
    assert await call(queue.get("nope")) is None


async def test_enqueue_many_writes_every_request_in_order(queue: Queue) -> None:
    results = await call(
        queue.enqueue_many(
            [EnqueueRequest("a.b", 1), EnqueueRequest("a.c", 2, queue="other", priority=2)]
        )
    )
    assert [(r.duplicate, r.job.name, r.job.payload, r.job.queue) for r in results] == [
        (False, "a.b", 1, "default"),
        (False, "a.c", 2, "other"),
    ]
    assert results[1].job.priority == 2
    assert [await call(queue.get(r.job.id)) for r in results] == [r.job for r in results]


async def test_enqueue_many_accepts_any_iterable(queue: Queue) -> None:
    results = await call(queue.enqueue_many(EnqueueRequest("a.b", i) for i in range(3)))
    assert [r.job.payload for r in results] == [0, 1, 2]


async def test_enqueue_many_of_nothing(queue: Queue) -> None:
    assert await call(queue.enqueue_many([])) == []


# -- idempotency ------------------------------------------------------------------------


async def test_same_key_and_request_returns_the_existing_job(queue: Queue) -> None:
    first = await call(queue.enqueue("a.b", {"x": 1, "y": 2}, idempotency_key="k", tenant="t"))
    others: dict[str, Any] = {"priority": 5, "delay": 30, "max_attempts": 1, "timeout": 1}
    again = await call(
        queue.enqueue("a.b", {"y": 2, "x": 1}, idempotency_key="k", tenant="t", lease=1, **others)
    )
    assert (again.duplicate, again.job) == (True, first.job)
    assert [j.id for j in (await call(queue.list())).jobs] == [first.job.id]


@pytest.mark.parametrize(
    "change",
    # Another tenant is another scope, not a conflict: see test_tenants.py.
    [{"name": "a.c"}, {"payload": {"x": 2}}, {"payload": None}],
)
async def test_same_key_with_a_different_request_conflicts(
    queue: Queue, change: dict[str, Any]
) -> None:
    first = await call(queue.enqueue("a.b", {"x": 1}, idempotency_key="k", tenant="t"))
    request: dict[str, Any] = {"name": "a.b", "payload": {"x": 1}, "tenant": "t"} | change
    with pytest.raises(JobIdempotencyConflictError) as caught:
        await call(queue.enqueue(idempotency_key="k", **request))
    assert (caught.value.key, caught.value.existing_job_id) == ("k", first.job.id)
    assert "Idempotency key 'k' is already bound to job" in str(caught.value)


async def test_a_key_is_scoped_to_its_queue(queue: Queue) -> None:
    first = await call(queue.enqueue("a.b", idempotency_key="k"))
    other = await call(queue.enqueue("a.c", idempotency_key="k", queue="other"))
    assert other.duplicate is False
    assert other.job.id != first.job.id


async def test_a_duplicate_is_returned_whatever_the_status(queue: Queue) -> None:
    first = await call(queue.enqueue("a.b", idempotency_key="k"))
    assert await call(queue.cancel(first.job.id))
    again = await call(queue.enqueue("a.b", idempotency_key="k"))
    assert (again.duplicate, again.job.id, again.job.status) == (
        True,
        first.job.id,
        JobStatus.CANCELLED,
    )


async def test_repeated_keys_in_one_batch_resolve_in_order(queue: Queue) -> None:
    results = await call(
        queue.enqueue_many(
            [
                EnqueueRequest("a.b", "x", idempotency_key="k"),
                EnqueueRequest("a.b", "y"),
                EnqueueRequest("a.b", "x", idempotency_key="k", priority=9),
            ]
        )
    )
    assert [r.duplicate for r in results] == [False, False, True]
    assert results[2].job == results[0].job


async def test_a_conflict_inside_a_batch_stops_it_after_the_written_requests(
    queue: Queue,
) -> None:
    requests = [
        EnqueueRequest("a.b", "x", idempotency_key="k"),
        EnqueueRequest("a.b", "y"),
        EnqueueRequest("a.b", "z", idempotency_key="k"),
        EnqueueRequest("a.b", "w"),
    ]
    with pytest.raises(JobBatchError) as caught:
        await call(queue.enqueue_many(requests))
    written = caught.value.results
    assert [r.job.payload for r in written] == ["x", "y"]
    assert isinstance(caught.value.__cause__, JobIdempotencyConflictError)
    assert caught.value.__cause__.existing_job_id == written[0].job.id
    assert {j.id for j in (await call(queue.list())).jobs} == {r.job.id for r in written}


# -- store errors part-way --------------------------------------------------------------


@pytest.mark.parametrize("cls", [JobQueue, SyncJobQueue], ids=["async", "sync"])
async def test_a_full_store_stops_a_batch_with_the_written_results(
    cls: type[Queue], clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    queue = cls(MemoryJobStore(capacity=2, clock=clock), clock=clock)
    with caplog.at_level(logging.INFO, logger="sqsjobs"), pytest.raises(JobBatchError) as caught:
        await call(queue.enqueue_many([EnqueueRequest("a.b", i) for i in range(4)]))
    written = caught.value.results
    assert [r.job.payload for r in written] == [0, 1]
    cause = caught.value.__cause__
    assert isinstance(cause, JobConfigError)
    assert cause.code == "store_full"
    assert {j.id for j in (await call(queue.list())).jobs} == {r.job.id for r in written}
    logged = [r.job_id for r in caplog.records if getattr(r, "event", "") == "jobs.enqueue"]  # type: ignore[attr-defined]
    assert logged == [r.job.id for r in written]


class FailingStore(MemoryJobStore):
    """Writes the first ``good`` items of a batch, then fails as a remote store might."""

    def __init__(self, good: int, **options: Any) -> None:
        super().__init__(**options)
        self.good = good

    async def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        written = await super().put_many(items[: self.good])
        try:
            raise ConnectionError("connection reset by peer")
        except ConnectionError as error:
            raise JobBatchError(written, f"Batch stopped at request {self.good}") from error


async def test_a_store_error_part_way_reaches_the_caller_with_its_cause(clock: FakeClock) -> None:
    queue = JobQueue(FailingStore(2, clock=clock), clock=clock)
    with pytest.raises(JobBatchError) as caught:
        await queue.enqueue_many([EnqueueRequest("a.b", i) for i in range(3)])
    assert [r.job.payload for r in caught.value.results] == [0, 1]
    assert isinstance(caught.value.__cause__, ConnectionError)


async def test_a_single_enqueue_into_a_full_store_raises_store_full(clock: FakeClock) -> None:
    queue = JobQueue(MemoryJobStore(capacity=1, clock=clock), clock=clock)
    await queue.enqueue("a.b")
    with pytest.raises(JobConfigError) as caught:
        await queue.enqueue("a.b")
    assert caught.value.code == "store_full"


# -- cancel -----------------------------------------------------------------------------


async def test_cancel(queue: Queue, clock: FakeClock) -> None:
    job = (await call(queue.enqueue("a.b"))).job
    clock.advance(1)
    assert await call(queue.cancel(job.id)) is True
    cancelled = await call(queue.get(job.id))
    assert (cancelled.status, cancelled.updated_at) == (JobStatus.CANCELLED, at(T + 1))
    assert await call(queue.cancel(job.id)) is False
    assert await call(queue.cancel("unknown")) is False


async def test_cancel_of_a_running_job(queue: Queue, store: MemoryJobStore) -> None:
    job = (await call(queue.enqueue("a.b"))).job
    await store.claim("default", "w", T)
    assert await call(queue.cancel(job.id)) is True
    assert (await call(queue.get(job.id))).status is JobStatus.CANCELLED


# -- list -------------------------------------------------------------------------------


async def _statuses(queue: Queue, store: MemoryJobStore, clock: FakeClock) -> dict[str, str]:
    queued = (await call(queue.enqueue("a.b"))).job
    clock.advance(1)
    delayed = (await call(queue.enqueue("a.b", delay=60))).job
    clock.advance(1)
    running = (await call(queue.enqueue("a.c", tenant="acme", priority=1))).job
    [claimed] = await store.claim("default", "w", clock())
    assert claimed.id == running.id
    return {"queued": queued.id, "delayed": delayed.id, "running": running.id}


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (lambda: None, ["queued", "delayed", "running"]),
        (lambda: JobStatus.RUNNING, ["running"]),
        (lambda: "queued", ["queued"]),
        (lambda: ["delayed", JobStatus.QUEUED], ["queued", "delayed"]),
        (lambda: (s for s in ("running", "delayed")), ["delayed", "running"]),
        (lambda: {JobStatus.DEAD}, []),
    ],
    ids=["none", "enum", "string", "list", "generator", "set"],
)
async def test_list_status_as_enum_string_or_iterable(
    queue: Queue,
    store: MemoryJobStore,
    clock: FakeClock,
    status: Callable[[], Any],
    expected: list[str],
) -> None:
    ids = await _statuses(queue, store, clock)
    page = await call(queue.list(status=status()))
    assert isinstance(page, JobPage)
    assert [job.id for job in page.jobs] == [ids[label] for label in expected]


async def test_list_filters_by_queue_name_and_tenant(
    queue: Queue, store: MemoryJobStore, clock: FakeClock
) -> None:
    ids = await _statuses(queue, store, clock)
    other = (await call(queue.enqueue("a.b", queue="other"))).job
    assert [j.id for j in (await call(queue.list(queue="other"))).jobs] == [other.id]
    assert [j.id for j in (await call(queue.list(name="a.c"))).jobs] == [ids["running"]]
    assert [j.id for j in (await call(queue.list(tenant="acme"))).jobs] == [ids["running"]]
    assert [j.id for j in (await call(queue.list(queue="default", name="a.b"))).jobs] == [
        ids["queued"],
        ids["delayed"],
    ]


async def test_list_pages_through_cursors(queue: Queue, clock: FakeClock) -> None:
    ids = []
    for _ in range(3):
        ids.append((await call(queue.enqueue("a.b"))).job.id)
        clock.advance(1)
    first = await call(queue.list(limit=2))
    second = await call(queue.list(limit=2, cursor=first.next_cursor))
    assert [j.id for j in first.jobs] == ids[:2]
    assert [j.id for j in second.jobs] == ids[2:]
    assert second.next_cursor is None


@pytest.mark.parametrize(
    "arguments",
    [
        {"status": "finished"},
        {"status": ["queued", "bogus"]},
        {"limit": 0},
        {"limit": 1001},
        {"limit": True},
        {"cursor": "garbage"},
    ],
)
async def test_list_rejects_bad_arguments(queue: Queue, arguments: dict[str, Any]) -> None:
    with pytest.raises(JobConfigError) as caught:
        await call(queue.list(**arguments))
    assert caught.value.code == "invalid_option"


def _cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        '[NaN,"x"]',
        '[Infinity,"x"]',
        '[-Infinity,"x"]',
        '[1e999,"x"]',
        '[1e300,"x"]',
        f'[{10**400},"x"]',
        '[1796094741.2439704,"\\udc00"]',
    ],
)
async def test_list_refuses_a_cursor_that_is_not_a_finite_position(
    queue: Queue, clock: FakeClock, cursor: str
) -> None:
    await call(queue.enqueue("a.b", {"n": 1}))
    with pytest.raises(JobConfigError) as caught:
        await call(queue.list(cursor=_cursor(cursor)))
    assert caught.value.code == "invalid_option"
    assert "pass a next_cursor returned by list()" in str(caught.value)


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"queue": "a b"}, "invalid_name"),
        ({"name": "1"}, "invalid_name"),
        ({"tenant": "A"}, "invalid_option"),
    ],
)
async def test_list_validates_its_filters(
    queue: Queue, arguments: dict[str, Any], code: str
) -> None:
    with pytest.raises(JobConfigError) as caught:
        await call(queue.list(**arguments))
    assert caught.value.code == code


# -- bounds and unencodable payloads: refused before anything is written ----------------

DIGITS = sys.get_int_max_str_digits()


@pytest.mark.parametrize(
    ("options", "allowed"),
    [
        ({"lease": 1e300}, "<= 43200 (SQS's visibility cap)"),
        ({"lease": timedelta(hours=12, seconds=1)}, "<= 43200 (SQS's visibility cap)"),
        ({"timeout": timedelta(days=8)}, "<= 604800 (7 days)"),
        ({"delay": 1e300}, "<= 31622400 (366 days)"),
        ({"delay": timedelta.max}, "<= 31622400 (366 days)"),
        ({"run_at": datetime.max.replace(tzinfo=UTC)}, "at most 366 days"),
        ({"run_at": at(T + 367 * 86_400)}, "at most 366 days"),
        ({"priority": 2**53 + 1}, "from -2147483648 to 2147483647"),
        ({"priority": -(2**31) - 1}, "from -2147483648 to 2147483647"),
    ],
    ids=[
        "lease",
        "lease-timedelta",
        "timeout",
        "delay",
        "delay-timedelta-max",
        "run_at-max",
        "run_at-367-days",
        "priority-2**53+1",
        "priority-below",
    ],
)
async def test_options_out_of_bounds_are_refused_before_any_write(
    queue: Queue, options: dict[str, Any], allowed: str
) -> None:
    with pytest.raises(JobConfigError) as caught:
        await call(queue.enqueue("report.build", {"tenant": "acme"}, **options))
    assert caught.value.code == "invalid_option"
    assert allowed in str(caught.value)
    with pytest.raises(JobConfigError):
        await call(queue.enqueue_many([EnqueueRequest("report.build", None, **options)]))
    assert (await call(queue.list())).jobs == []


async def test_options_at_their_bounds_are_kept(queue: Queue) -> None:
    options: dict[str, Any] = {
        "lease": 43_200,
        "timeout": timedelta(days=7),
        "delay": timedelta(days=366),
        "priority": 2**31 - 1,
    }
    job = (await call(queue.enqueue("report.build", {"tenant": "acme"}, **options))).job
    assert (job.lease, job.timeout, job.run_at, job.priority) == (
        43_200.0,
        604_800.0,
        at(T + 366 * 86_400),
        2**31 - 1,
    )
    assert await call(queue.get(job.id)) == job


@pytest.mark.parametrize(
    "payload",
    [10**DIGITS, {"body": "r\u00e9sum\u00e9 \ud800"}, {"\udfff": 1}, {"deep": [{"k\udc00": 1}]}],
    ids=["huge-int", "surrogate", "surrogate-key", "nested-surrogate-key"],
)
@pytest.mark.parametrize("key", [None, "order-7"])
async def test_payloads_that_cannot_be_encoded_are_refused_before_any_write(
    queue: Queue, payload: Any, key: str | None
) -> None:
    with pytest.raises(JobConfigError) as caught:
        await call(queue.enqueue("mail.send", payload, idempotency_key=key, tenant="acme"))
    assert caught.value.code == "invalid_payload"
    str(caught.value).encode()
    assert (await call(queue.list())).jobs == []


# -- SyncJobQueue from other threads and over async-only stores -------------------------


async def test_a_sync_enqueue_from_a_thread_wakes_an_async_claimer(store: MemoryJobStore) -> None:
    producer = SyncJobQueue(store, clock=lambda: T)
    waiting = asyncio.create_task(store.claim("default", "w", T, wait=5))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    result = await asyncio.to_thread(producer.enqueue, "a.b", {"n": 1})
    [claimed] = await asyncio.wait_for(waiting, timeout=4)
    assert (claimed.id, claimed.status, claimed.payload) == (
        result.job.id,
        JobStatus.RUNNING,
        {"n": 1},
    )


class AsyncOnlyStore:
    """A custom store with the async SPI only: no ``sync`` view."""

    def __init__(self, clock: FakeClock) -> None:
        self._inner = MemoryJobStore(clock=clock)
        self.calls: list[str] = []

    async def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        self.calls.append("put")
        return await self._inner.put(job, fingerprint)

    async def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        self.calls.append("put_many")
        return await self._inner.put_many(items)

    async def get(self, job_id: str, now: float) -> Job | None:
        self.calls.append("get")
        return await self._inner.get(job_id, now)

    async def cancel(self, job_id: str, now: float) -> bool:
        self.calls.append("cancel")
        return await self._inner.cancel(job_id, now)

    async def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        self.calls.append("list")
        return await self._inner.list(filter, limit, cursor, now)


def test_sync_queue_over_a_store_with_only_the_async_face(clock: FakeClock) -> None:
    store = AsyncOnlyStore(clock)
    queue = SyncJobQueue(store, clock=clock)  # type: ignore[arg-type]
    job = queue.enqueue("a.b", {"n": 1}).job
    [second] = queue.enqueue_many([EnqueueRequest("a.c")])
    assert queue.get(job.id) == job
    assert {j.id for j in queue.list().jobs} == {job.id, second.job.id}
    assert queue.cancel(job.id) is True
    assert store.calls == ["put", "put_many", "get", "list", "cancel"]


# -- structured logs --------------------------------------------------------------------

SECRET = "hunter2-secret"


def _records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "sqsjobs"]


async def test_enqueue_and_duplicate_log_structured_records_without_the_payload(
    queue: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        first = await call(
            queue.enqueue("a.b", {"password": SECRET}, idempotency_key="k", delay=2.5)
        )
        await call(queue.enqueue("a.b", {"password": SECRET}, idempotency_key="k"))
    enqueued, duplicate = _records(caplog)
    fields = ("event", "job_id", "job_name", "queue", "attempt")
    assert tuple(getattr(enqueued, f) for f in (*fields, "delay")) == (
        "jobs.enqueue",
        first.job.id,
        "a.b",
        "default",
        0,
        2.5,
    )
    assert tuple(getattr(duplicate, f) for f in fields) == (
        "jobs.duplicate",
        first.job.id,
        "a.b",
        "default",
        0,
    )
    for record in (enqueued, duplicate):
        assert record.levelno == logging.INFO
        assert SECRET not in record.getMessage()
        assert SECRET not in repr(vars(record))


async def test_enqueue_many_logs_one_record_per_request(
    queue: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        results = await call(
            queue.enqueue_many([EnqueueRequest("a.b", SECRET), EnqueueRequest("a.c", SECRET)])
        )
    records = _records(caplog)
    assert [(r.event, r.job_id, r.job_name) for r in records] == [  # type: ignore[attr-defined]
        ("jobs.enqueue", results[0].job.id, "a.b"),
        ("jobs.enqueue", results[1].job.id, "a.c"),
    ]
    assert all(SECRET not in repr(vars(r)) for r in records)


async def test_cancel_logs_a_record(queue: Queue, caplog: pytest.LogCaptureFixture) -> None:
    job = (await call(queue.enqueue("a.b", SECRET))).job
    with caplog.at_level(logging.INFO, logger="sqsjobs"):
        await call(queue.cancel(job.id))
        await call(queue.cancel(job.id))
    [record] = _records(caplog)
    assert (record.event, record.job_id) == ("jobs.cancelled", job.id)  # type: ignore[attr-defined]
    assert SECRET not in repr(vars(record))


async def test_a_queue_logs_through_its_own_logger(
    store: MemoryJobStore, caplog: pytest.LogCaptureFixture
) -> None:
    queue = JobQueue(store, clock=lambda: T, logger=logging.getLogger("app.jobs"))
    with caplog.at_level(logging.INFO, logger="app.jobs"):
        result = await queue.enqueue("a.b")
    [record] = [r for r in caplog.records if r.name == "app.jobs"]
    assert (record.event, record.job_id) == ("jobs.enqueue", result.job.id)  # type: ignore[attr-defined]
