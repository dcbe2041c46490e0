"""What botocore raises instead of sending (or instead of an answer it can read) is a
``JobStoreError`` too, on every public call and both faces.

No credentials, a credential provider that fails to refresh, a profile that does not
exist, an endpoint that answers but is no AWS: each came out of ``get``, ``enqueue``,
the blocking enqueue, ``claim`` and ``create`` as botocore's own exception. Each is now
a ``JobStoreError`` naming botocore's exception as its code, with that exception as its
cause, and ``retryable`` says whether the same call may pass later without anyone
changing the configuration.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.credentials import DeferredRefreshableCredentials
from botocore.exceptions import CredentialRetrievalError

from sqsjobs import JobQueue, JobStoreError, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from tests.aws.emulator import unique_prefix
from tests.faults.local_servers import Peer, Server


@pytest.fixture
def made(aws_endpoint: str) -> Iterator[SqsJobStore]:
    """A table and queues, made with the emulator's credentials."""
    store = SqsJobStore.create(unique_prefix(), endpoint_url=aws_endpoint)
    yield store
    store.close()


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing anywhere botocore looks: no variables, files, profile, nor metadata."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance metadata call
    for name in ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)


def same_tables(made: SqsJobStore, endpoint: str, **options: Any) -> SqsJobStore:
    return SqsJobStore(
        table_name=made.table_name, queue_urls=made.queue_urls, endpoint_url=endpoint, **options
    )


def assert_store_error(raised: BaseException, code: str, *, retryable: bool) -> None:
    assert isinstance(raised, JobStoreError), f"{type(raised).__name__}: {raised}"
    assert (raised.code, raised.retryable) == (code, retryable)
    assert type(raised.__cause__).__name__ == code


async def test_no_credentials_is_a_store_error_on_every_call(
    made: SqsJobStore, aws_endpoint: str, no_credentials: None
) -> None:
    store = same_tables(made, aws_endpoint)
    queue = JobQueue(store)
    calls = {
        "get": lambda: queue.get("9d1b7a0c4e2f4a6b8c0d2e4f6a8b0c1d"),
        "enqueue": lambda: queue.enqueue("report.monthly", {"month": "2026-11"}),
        "claim": lambda: store.claim("default", "w-1", time.time()),
    }
    try:
        for call in calls.values():
            with pytest.raises(JobStoreError) as raised:
                await call()
            assert_store_error(raised.value, "NoCredentialsError", retryable=False)
        with pytest.raises(JobStoreError) as blocking:
            await asyncio.to_thread(SyncJobQueue(store).enqueue, "report.monthly")
        assert_store_error(blocking.value, "NoCredentialsError", retryable=False)
        with pytest.raises(JobStoreError) as creating:
            await asyncio.to_thread(SqsJobStore.create, unique_prefix(), endpoint_url=aws_endpoint)
        assert_store_error(creating.value, "NoCredentialsError", retryable=False)
    finally:
        await store.aclose()


def test_a_missing_profile_is_a_store_error(
    made: SqsJobStore, aws_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_PROFILE", "nosuch")
    store = same_tables(made, aws_endpoint)
    try:
        with pytest.raises(JobStoreError) as raised:
            SyncJobQueue(store).enqueue("report.monthly")
        assert_store_error(raised.value, "ProfileNotFound", retryable=False)
        assert "nosuch" in str(raised.value)
    finally:
        store.close()


def failing_refresh() -> dict[str, str]:
    raise CredentialRetrievalError(provider="container-role", error_msg="connection reset")


async def test_a_provider_that_fails_to_refresh_is_a_retryable_store_error(
    made: SqsJobStore, aws_endpoint: str, no_credentials: None
) -> None:
    boto = botocore.session.Session()
    boto._credentials = DeferredRefreshableCredentials(failing_refresh, "container-role")
    store = same_tables(made, aws_endpoint, session=boto3.Session(botocore_session=boto))
    try:
        with pytest.raises(JobStoreError) as raised:
            SyncJobQueue(store).enqueue("report.monthly")
        assert_store_error(raised.value, "CredentialRetrievalError", retryable=True)
    finally:
        store.close()


async def test_an_endpoint_that_is_no_aws_is_a_store_error_naming_it(aws_endpoint: str) -> None:
    """A wrong port, a proxy's page: botocore reads an HTML page as an empty success of
    DynamoDB's and SQS's JSON APIs, so the enqueue seemed done and nothing was written."""
    page = b"<html><body>Sign in to the guest network</body></html>"

    async def portal(peer: Peer, server: Server) -> None:
        while (request := await peer.request()) is not None:
            server.requests.append(request)
            head = (
                f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(page)}\r\n\r\n"
            )
            peer.writer.write(head.encode() + page)
            await peer.writer.drain()

    server = Server(portal)  # aws_endpoint: for the emulator's region and credentials alone
    await server.start()
    endpoint = f"http://127.0.0.1:{server.port}"
    store = SqsJobStore(
        table_name="jobs",
        queue_urls={"default": f"{endpoint}/000000000000/jobs"},
        endpoint_url=endpoint,
    )
    try:
        for call in (
            lambda: JobQueue(store).enqueue("report.monthly"),
            lambda: store.claim("default", "w-1", time.time()),
        ):
            with pytest.raises(JobStoreError) as raised:
                await call()
            assert (raised.value.code, raised.value.retryable) == ("NotAwsAnswer", False)
            assert f"{endpoint} answered with 'text/html', which no AWS API sends" in str(
                raised.value
            )
        with pytest.raises(JobStoreError) as blocking:
            await asyncio.to_thread(SyncJobQueue(store).enqueue, "report.monthly")
        assert blocking.value.code == "NotAwsAnswer"
        assert len(server.requests) == 3  # one each: nothing taken for a success
    finally:
        await store.aclose()
        await server.stop()
