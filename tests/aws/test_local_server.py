"""The emulator's server keeps connections open between requests, as AWS does
(``sqsjobs.testing_server``), without ever taking one request's body for the next."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest

from sqsjobs import EnqueueRequest, JobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing import RequestCounter, WsgiApp, local_aws

from .emulator import ENVIRONMENT, unique_prefix

AUTHORIZATION = (
    "AWS4-HMAC-SHA256 Credential=testing/20261202/us-east-1/dynamodb/aws4_request, "
    "SignedHeaders=host, Signature=0"
)
LIST_TABLES = {
    "X-Amz-Target": "DynamoDB_20120810.ListTables",
    "Content-Type": "application/x-amz-json-1.0",
    "Authorization": AUTHORIZATION,
}


class Peers(RequestCounter):
    """Notes each request's client port (one per connection), and answers ``/unread``
    itself without reading the request's body."""

    def __init__(self) -> None:
        super().__init__()
        self.ports: list[int] = []
        self._ports_lock = threading.Lock()

    def wrap(self, app: WsgiApp) -> WsgiApp:
        def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            with self._ports_lock:
                self.ports.append(int(environ["REMOTE_PORT"]))
            if environ["PATH_INFO"] == "/unread":
                start_response("200 OK", [("Content-Length", "6")])
                return [b"unread"]
            return app(environ, start_response)

        return super().wrap(serve)


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)


@contextmanager
def emulator() -> Iterator[tuple[http.client.HTTPConnection, Peers, str]]:
    peers = Peers()
    with local_aws(counter=peers) as endpoint:
        host, port = endpoint.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            yield connection, peers, endpoint
        finally:
            connection.close()


def list_tables(connection: http.client.HTTPConnection) -> http.client.HTTPResponse:
    connection.request("POST", "/", body=b"{}", headers=LIST_TABLES)
    response = connection.getresponse()
    assert response.status == 200
    assert "TableNames" in json.loads(response.read())
    return response


@pytest.mark.usefixtures("environment")
def test_one_connection_serves_request_after_request() -> None:
    with emulator() as (connection, peers, _):
        replies = [list_tables(connection) for _ in range(5)]
        assert connection.sock is not None  # http.client drops a socket the server closes
        assert [reply.getheader("Connection") for reply in replies] == [None] * 5
        assert len(peers.ports) == 5 and len(set(peers.ports)) == 1


@pytest.mark.usefixtures("environment")
def test_a_body_the_application_leaves_unread_is_not_taken_for_the_next_request() -> None:
    body = ("zoë → 工作 " * 26_000).encode()[:262_143]  # just under SQS's 256 KiB
    with emulator() as (connection, peers, _):
        connection.request("POST", "/unread", body=body, headers=LIST_TABLES)
        answer = connection.getresponse()
        assert (answer.status, answer.read()) == (200, b"unread")
        list_tables(connection)
        assert len(set(peers.ports)) == 1


@pytest.mark.usefixtures("environment")
def test_a_chunked_body_or_a_client_asking_for_it_closes_the_connection() -> None:
    with emulator() as (connection, peers, _):
        chunks = iter([b"{", b"}"])
        connection.request("POST", "/", body=chunks, headers=LIST_TABLES, encode_chunked=True)
        reply = connection.getresponse()
        assert (reply.status, reply.getheader("Connection")) == (200, "close")
        reply.read()
        assert connection.sock is None
        connection.request("POST", "/", body=b"{}", headers={**LIST_TABLES, "Connection": "close"})
        reply = connection.getresponse()
        assert (reply.status, reply.getheader("Connection")) == (200, "close")
        reply.read()
        list_tables(connection)
        assert len(set(peers.ports)) == 3


@pytest.mark.usefixtures("environment")
def test_stopping_the_emulator_shuts_the_connections_left_open() -> None:
    with local_aws() as endpoint:
        host, port = endpoint.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        list_tables(connection)
    try:
        assert connection.sock is not None
        assert connection.sock.recv(1) == b""  # the stream's end, not a wait for a reply
    finally:
        connection.close()


@pytest.mark.usefixtures("environment")
def test_clients_reuse_their_connections_as_on_aws() -> None:
    with emulator() as (_, peers, endpoint):
        client = boto3.client("dynamodb", endpoint_url=endpoint)
        for _ in range(6):
            client.list_tables()
        client.close()
        assert len(peers.ports) == 6 and len(set(peers.ports)) == 1

        store = SqsJobStore.create(unique_prefix(), endpoint_url=endpoint)
        opened_before = asyncio.run(enqueue_then_drain(store, peers, jobs=24))
        # The drain's claims and completions (ten at a time) and its receives and
        # deletes went over the connections the enqueue had left open; a server closing
        # each connection after its reply would give every request a new one.
        assert len(peers.ports) >= 2 * 24 + 2
        assert len(set(peers.ports) - opened_before) <= 2


async def enqueue_then_drain(store: SqsJobStore, peers: Peers, *, jobs: int) -> set[int]:
    """Enqueue ``jobs`` jobs, then claim and complete them; the client ports of the
    enqueue's connections (``peers`` is left with the drain's requests)."""
    mail = [EnqueueRequest("email.send", {"to": f"zoë{n}@example.com"}) for n in range(jobs)]
    await JobQueue(store).enqueue_many(mail)
    opened = set(peers.ports)
    del peers.ports[:]
    done = 0
    while done < jobs:
        claimed = await store.claim("default", "w1", time.time(), limit=10, wait=1)
        results = await asyncio.gather(
            *(store.complete(job.id, job.lease_token or "", time.time(), None) for job in claimed)
        )
        assert all(results)
        done += len(claimed)
    await store.aclose()
    return opened
