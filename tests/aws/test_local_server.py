"""The emulator's server (``sqsjobs.testing.server``) keeps connections open between
requests, as AWS does, without ever taking one request's body for the next; and it
serves the AWS APIs to SDKs on this machine, nothing of moto's own and nothing to a
web page."""

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
from sqsjobs.cli._emulator import emulated_aws
from sqsjobs.testing import RequestCounter, local_aws
from sqsjobs.testing.wsgi import WsgiApp

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


def ask(
    endpoint: str, method: str, path: str, body: bytes | None = None, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """One request on a connection of its own: status, headers (lower-case names), body."""
    host, port = endpoint.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, answer
    finally:
        connection.close()


@contextmanager
def emulator_holding_a_message() -> Iterator[tuple[str, str, Any]]:
    """The emulator with a queue holding one message (a demo's job); its endpoint, the
    message's body and an SQS client."""
    with local_aws() as endpoint:
        sqs = boto3.client("sqs", endpoint_url=endpoint)
        queue = sqs.create_queue(QueueName=f"{unique_prefix()}-jobs")["QueueUrl"]
        secret = '{"job": "j-7f3a", "to": "zoë@example.com", "token": "tok-ß9"}'
        sqs.send_message(QueueUrl=queue, MessageBody=secret)
        try:
            yield endpoint, queue, sqs
        finally:
            sqs.close()


MOTO_OWN_PATHS = [
    ("GET", "/moto-api/"),  # the dashboard
    ("GET", "/moto-api/data.json"),  # every backend's state: messages, items, job ids
    ("POST", "/moto-api/reset"),
    ("POST", "/moto-api/seed?a=42"),
    ("POST", "/moto-api/config"),
    ("GET", "/moto-api/recorder/download-recording"),
    ("GET", "/latest/meta-data/iam/security-credentials/"),  # instance metadata
    ("GET", "/favicon.ico"),
]


@pytest.mark.usefixtures("environment")
@pytest.mark.parametrize(("method", "path"), MOTO_OWN_PATHS)
def test_the_emulators_own_api_is_not_served(method: str, path: str) -> None:
    """Only the AWS APIs: moto's own (its dashboard, its state as JSON, reset, seeds,
    recordings) and its fake instance metadata answer 404, and change nothing."""
    with emulator_holding_a_message() as (endpoint, queue, sqs):
        status, headers, body = ask(endpoint, method, path, b"" if method == "POST" else None)
        assert status == 404
        assert b"j-7f3a" not in body and "access-control-allow-origin" not in headers
        attributes = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])
        assert attributes["Attributes"]["ApproximateNumberOfMessages"] == "1"  # no reset


@pytest.mark.usefixtures("environment")
def test_moto_is_not_reached_through_its_own_api_by_another_spelling() -> None:
    """moto picks its own API by the path's prefix, or by the service a request says it
    signed for: a doubled slash with a forged credential scope reached it."""
    forged = (
        "AWS4-HMAC-SHA256 Credential=x/20261202/us-east-1/motoapi.amazonaws.com/aws4_request, "
        "SignedHeaders=host, Signature=0"
    )
    with emulator_holding_a_message() as (endpoint, _, _):
        for path in ("//moto-api/data.json", "/moto-api//data.json", "/%6Doto-api/data.json"):
            status, _, body = ask(endpoint, "GET", path, Authorization=forged)
            assert status == 404, path
            assert b"j-7f3a" not in body


@pytest.mark.usefixtures("environment")
def test_a_request_for_another_host_name_is_refused() -> None:
    """A page whose own name was made to resolve to 127.0.0.1 (DNS rebinding) sends that
    name as ``Host``: refused with 400. SDK requests name 127.0.0.1 or localhost."""
    with emulator_holding_a_message() as (endpoint, _, _):
        port = endpoint.rpartition(":")[2]
        for host in (f"rebound.example:{port}", "rebound.example", f"127.0.0.1.nip.io:{port}"):
            status, _, body = ask(endpoint, "POST", "/", b"{}", Host=host, **LIST_TABLES)
            assert status == 400, host
            assert b"TableNames" not in body
            assert ask(endpoint, "GET", "/moto-api/data.json", Host=host)[0] == 400
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LocalHost:{port}"):
            status, _, body = ask(endpoint, "POST", "/", b"{}", Host=host, **LIST_TABLES)
            assert (status, "TableNames" in json.loads(body)) == (200, True), host


@pytest.mark.usefixtures("environment")
def test_a_web_page_can_neither_preflight_nor_read_a_reply() -> None:
    """moto answered every origin's CORS preflight with its blessing, and every reply
    with ``Access-Control-Allow-Origin: *``: any page could read the queue. A request a
    browser makes (it says where from: ``Origin``, ``Sec-Fetch-Site``) is refused, and
    no reply allows another origin to read it."""
    receive = {
        "X-Amz-Target": "AmazonSQS.ReceiveMessage",
        "Content-Type": "application/x-amz-json-1.0",
    }
    with emulator_holding_a_message() as (endpoint, queue, sqs):
        body = json.dumps({"QueueUrl": queue}).encode()
        preflight = ask(
            endpoint,
            "OPTIONS",
            "/",
            Origin="http://page.example",
            **{"Access-Control-Request-Method": "POST"},
            **{"Access-Control-Request-Headers": "content-type,x-amz-target"},
        )
        from_page = ask(endpoint, "POST", "/", body, Origin="http://page.example", **receive)
        no_cors = ask(endpoint, "POST", "/", body, **{"Sec-Fetch-Site": "cross-site"}, **receive)
        for status, headers, answer in (preflight, from_page, no_cors):
            assert status == 403
            assert not [name for name in headers if name.startswith("access-control-")]
            assert b"j-7f3a" not in answer
        status, headers, _ = ask(endpoint, "POST", "/", b"{}", **LIST_TABLES)  # an SDK's
        assert status == 200
        assert not [name for name in headers if name.startswith("access-control-")]
        received = sqs.receive_message(QueueUrl=queue)["Messages"]  # still there, unread
        assert [json.loads(message["Body"])["job"] for message in received] == ["j-7f3a"]


def test_the_emulator_command_serves_sdks_and_refuses_pages_alike() -> None:
    """``sqsjobs emulator`` and the demo run ``local_aws`` (``cli._emulator``): the same
    AWS APIs for an SDK, the same refusals for moto's own API and a foreign host."""
    with emulated_aws() as endpoint:
        port = endpoint.rpartition(":")[2]
        sqs = boto3.client("sqs", endpoint_url=endpoint)
        queue = sqs.create_queue(QueueName=f"{unique_prefix()}-demo")["QueueUrl"]
        sqs.send_message(QueueUrl=queue, MessageBody="demo job ✓ j-4c1d")
        assert ask(endpoint, "GET", "/moto-api/data.json")[0] == 404
        assert (
            ask(endpoint, "POST", "/", b"{}", Host=f"demo.example:{port}", **LIST_TABLES)[0] == 400
        )
        received = sqs.receive_message(QueueUrl=queue)["Messages"]
        assert [message["Body"] for message in received] == ["demo job ✓ j-4c1d"]
        sqs.close()
