"""The store's calls go through the SDK its user configured: every call, every time.

A user's botocore event handler (what X-Ray, ddtrace and OpenTelemetry's botocore
instrumentation hook) sees each call the store makes, not only each operation's first;
Lambda's trace header is made per call; ``max_attempts`` counts the first try; and the
lean opt-in, when the botocore it runs on lacks a name it relies on, falls back to the
SDK's pipeline before sending anything.
"""

from __future__ import annotations

import asyncio
import time
import uuid
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import boto3
import pytest
from aiobotocore.session import AioSession, get_session
from botocore.config import Config
from botocore.exceptions import ClientError

from sqsjobs import JobQueue, JobStatus, JobStoreError, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.transports import lean as lean_module
from sqsjobs.aws.transports import lean_guard
from sqsjobs.aws.transports.lean_guard import refuse_unsafe

from .conftest import FaultyAws
from .faulty_aws import Fault, FaultPlan

HOT = ("PutItem", "SendMessage", "ReceiveMessage", "UpdateItem", "GetItem")


class Seen:
    """What a ``before-send`` handler saw: calls by ``(service, action)``, and headers."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self.trace_ids: list[str | None] = []

    def __call__(self, request: Any, event_name: str, **kwargs: Any) -> None:
        _, service, action = event_name.split(".")
        self.calls[(service, action)] += 1
        if action == "SendMessage":
            value = request.headers.get("X-Amzn-Trace-Id")
            self.trace_ids.append(value.decode() if isinstance(value, bytes) else value)


def prefix() -> str:
    return f"sdk-{uuid.uuid4().hex[:8]}"


async def run_jobs(store: SqsJobStore, count: int, batch: int = 10) -> None:
    """Enqueue ``count`` jobs, then claim up to ``batch`` at a time and complete each."""
    queue = JobQueue(store, default_timeout=5)
    ids = [
        (await queue.enqueue("invoice.render", {"n": n, "client": "Ærøskøbing"})).job.id
        for n in range(count)
    ]
    done = 0
    while done < count:
        for job in await store.claim("default", "worker-1", time.time(), limit=batch, wait=1.0):
            assert await store.complete(job.id, job.lease_token or "", time.time(), {"ok": 1})
            done += 1
    for job_id in ids:
        found = await queue.get(job_id)
        assert found is not None and found.status is JobStatus.COMPLETED


def served(faulty_aws: FaultyAws, before: Counter[tuple[str, str]]) -> Counter[tuple[str, str]]:
    now = faulty_aws.injector.counts().requests
    return Counter({key: now[key] - before[key] for key in now if now[key] > before[key]})


async def test_a_users_handler_sees_every_hot_call_on_the_default_path(
    faulty_aws: FaultyAws, made: Callable[..., SqsJobStore]
) -> None:
    seen = Seen()
    session = get_session()
    session.register("before-send", seen)
    store = made(aio_session=session)
    before = faulty_aws.injector.counts().requests
    await run_jobs(store, 6)
    answered = served(faulty_aws, before)
    for action in HOT:
        calls = [key for key in answered if key[1] == action]
        assert calls, action
        for key in calls:  # a receive may serve every claim: held messages
            assert seen.calls[key] == answered[key] >= (1 if action == "ReceiveMessage" else 2)


async def test_the_lean_opt_in_hides_later_calls_from_the_handler(
    faulty_aws: FaultyAws, made: Callable[..., SqsJobStore]
) -> None:
    """What the opt-in costs, as documented: after an operation's first call, the SDK's
    handlers no longer see it (so the test above would notice a path that skips them).
    One claim at a time, so that the first ``UpdateItem`` alone is the SDK's."""
    seen = Seen()
    session = get_session()
    session.register("before-send", seen)
    store = made(aio_session=session, lean=True)
    before = faulty_aws.injector.counts().requests
    await run_jobs(store, 6, batch=1)
    answered = served(faulty_aws, before)
    update = ("dynamodb", "UpdateItem")
    assert (answered[update], seen.calls[update]) == (12, 1)


def lambda_trace(monkeypatch: pytest.MonkeyPatch, n: int) -> str:
    trace = f"Root=1-6751c9a2-{n:024x};Parent=53995c3f42cd8ad{n};Sampled=1"
    monkeypatch.setenv("_X_AMZN_TRACE_ID", trace)
    return trace


async def test_each_send_carries_the_trace_header_of_its_own_invocation(
    faulty_aws: FaultyAws, made: Callable[..., SqsJobStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "orders-worker")
    blocking, asynchronous = Seen(), Seen()
    session, aio_session = boto3.Session(), get_session()
    session.events.register("before-send", blocking)
    aio_session.register("before-send", asynchronous)
    store = made(session=session, aio_session=aio_session)
    sent = []
    for n in range(3):
        sent.append(lambda_trace(monkeypatch, n))
        await asyncio.to_thread(SyncJobQueue(store).enqueue, "receipt.mail", {"n": n})
    for n in range(3, 6):
        sent.append(lambda_trace(monkeypatch, n))
        await JobQueue(store).enqueue("receipt.mail", {"n": n})
    assert blocking.trace_ids + asynchronous.trace_ids == sent


async def test_the_lean_path_makes_the_trace_header_per_call(
    faulty_aws: FaultyAws, made: Callable[..., SqsJobStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "orders-worker")
    store = made(lean=True)
    queue = JobQueue(store)
    await queue.enqueue("receipt.mail", {"n": "first"})  # learns the route
    aio = store._transport._aio
    assert aio is not None
    client, lean = await aio._opened("sqs")
    assert isinstance(lean, lean_module.LeanSender)
    headers: list[str] = []
    session = client._endpoint.http_session
    send = session.send

    async def recorded(request: Any) -> Any:
        value = request.headers.get("X-Amzn-Trace-Id", b"")
        headers.append(value.decode() if isinstance(value, bytes) else value)
        return await send(request)

    monkeypatch.setattr(session, "send", recorded)
    sent = []
    for n in range(3):
        sent.append(lambda_trace(monkeypatch, n))
        await queue.enqueue("receipt.mail", {"n": n})
    assert "send_message" in lean._routes
    assert [h for h in headers if h.startswith("Root=")] == sent


async def test_max_attempts_counts_the_first_try(
    faulty_aws: FaultyAws, made: Callable[..., SqsJobStore]
) -> None:
    store = made(max_attempts=3)
    queue = SyncJobQueue(store)
    name = f"report.build-{uuid.uuid4().hex[:8]}"  # the requests of this enqueue alone
    plan = FaultPlan(
        kinds=(Fault.SERVER_ERROR,), rate=1.0, actions=frozenset({"PutItem"}), body_contains=name
    )
    with faulty_aws.injector.faults(plan), pytest.raises(JobStoreError) as caught:
        queue.enqueue(name, {"month": "2026-11"})
    assert faulty_aws.injector.eligible[("dynamodb", "PutItem")] == 3
    assert (caught.value.operation, caught.value.code) == ("PutItem", "InternalServerError")
    assert caught.value.retryable and isinstance(caught.value.__cause__, ClientError)


async def test_a_lean_opt_in_without_a_name_it_needs_uses_the_sdk_and_says_so(
    faulty_aws: FaultyAws, made: Callable[..., SqsJobStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if botocore renamed ``_needs_retry``: the lean path finds out when a client
    opens, before any request, and every call then goes through the SDK's pipeline."""
    renamed = tuple(
        "_retry_needed" if name == "_needs_retry" else name
        for name in lean_guard.PRIVATE["endpoint"]
    )
    monkeypatch.setitem(lean_guard.PRIVATE, "endpoint", renamed)
    seen = Seen()
    session = get_session()
    session.register("before-send", seen)
    store = made(aio_session=session, lean=True)
    before = faulty_aws.injector.counts().requests
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await run_jobs(store, 4)
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(said) == 1 and "endpoint._retry_needed" in said[0]
    answered = served(faulty_aws, before)
    update = ("dynamodb", "UpdateItem")
    assert seen.calls[update] == answered[update] >= 8


async def test_a_retry_internal_renamed_after_the_probe_never_fails_a_sent_call(
    faulty_aws: FaultyAws, made: Callable[..., SqsJobStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As if botocore renamed its retry policy's ``_retry_checker``: the lean path reads it
    (and the attempts checker behind it) after the first reply, when the request was
    sent; it sends that reply through the ``needs-retry`` event instead of raising, so
    no record is written without its message and no claim fails over and over."""
    from aiobotocore.retries.standard import AioRetryPolicy

    born = AioRetryPolicy.__init__

    def renamed(self: Any, *args: Any, **kwargs: Any) -> None:
        born(self, *args, **kwargs)
        self._checker_renamed = self.__dict__.pop("_retry_checker")

    async def should_retry(self: Any, context: Any) -> bool:  # botocore's, on the new name
        return bool(await self._checker_renamed.is_retryable(context))

    monkeypatch.setattr(AioRetryPolicy, "__init__", renamed)
    monkeypatch.setattr(AioRetryPolicy, "should_retry", should_retry)
    store = made(lean=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            await run_jobs(store, 6)
    finally:
        await store.aclose()  # while its clients' policies still have the renamed name
    assert [w for w in caught if issubclass(w.category, RuntimeWarning)] == []


@pytest.mark.parametrize(
    "header",
    [
        ("X-Amz-Security-Token", b"IQoJb3JpZ2luX2VjE\r\nX-Injected: 1"),
        ("X-Amz-Target", "DynamoDB_20120810.UpdateItem\n"),
        ("X-Amz\0Bad", b"1"),
    ],
)
def test_a_header_with_a_line_break_or_nul_is_refused(header: tuple[str, Any]) -> None:
    name, value = header
    with pytest.raises(ValueError, match="CR, LF or NUL"):
        refuse_unsafe({"Content-Type": b"application/x-amz-json-1.0", name: value})
    refuse_unsafe({"Content-Type": b"application/x-amz-json-1.0", "X-Amz-Date": b"20261203"})


def test_the_callers_config_is_merged_over_the_stores_options(faulty_aws: FaultyAws) -> None:
    store = SqsJobStore.create(
        prefix(),
        endpoint_url=faulty_aws.endpoint,
        config=Config(user_agent_extra="orders-app/4.2", parameter_validation=True),
    )
    try:
        client = store._state.boto.client("dynamodb")
        config = client.meta.config
        assert config.user_agent_extra == "orders-app/4.2" and config.parameter_validation
        assert config.retries["total_max_attempts"] == 5 and config.read_timeout == 40.0
    finally:
        store.close()


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("session", AioSession(), "aio_session"),
        ("aio_session", boto3.Session(), "AioSession or an aioboto3.Session"),
        ("config", {"retries": {"max_attempts": 2}}, "botocore.config.Config"),
        ("lean", "yes", "True or False"),
    ],
)
def test_sdk_objects_of_the_wrong_kind_are_refused_before_anything_is_made(
    faulty_aws: FaultyAws, option: str, value: object, says: str
) -> None:
    name = prefix()
    with pytest.raises(ValueError, match=says):
        SqsJobStore.create(name, endpoint_url=faulty_aws.endpoint, **{option: value})
    tables = boto3.client("dynamodb", endpoint_url=faulty_aws.endpoint).list_tables()
    assert not [table for table in tables["TableNames"] if table.startswith(name)]


@pytest.mark.parametrize(
    ("value", "lean"), [("1", True), (" TRUE ", True), ("0", False), ("", False)]
)
def test_the_environment_turns_the_lean_path_on_for_every_store(
    monkeypatch: pytest.MonkeyPatch, value: str, lean: bool
) -> None:
    monkeypatch.setenv("SQSJOBS_LEAN", value)
    store = SqsJobStore(table_name="jobs-ü", queue_urls={"default": "https://sqs.example/1/q"})
    assert store._state.endpoint.lean is lean
    explicit = SqsJobStore(
        table_name="jobs-ü", queue_urls={"default": "https://sqs.example/1/q"}, lean=not lean
    )
    assert explicit._state.endpoint.lean is (not lean)  # the argument wins


def test_a_lean_setting_that_is_no_switch_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SQSJOBS_LEAN", "sometimes")
    with pytest.raises(ValueError, match="SQSJOBS_LEAN must be 1 or 0"):
        SqsJobStore(table_name="jobs", queue_urls={"default": "https://sqs.example/1/q"})
