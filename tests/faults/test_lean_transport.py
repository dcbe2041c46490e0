"""The lean path of the asyncio transport (``transports.lean``) over the emulator.

Each test makes a call twice: the first goes through aiobotocore and notes the route,
the second is sent by ``LeanSender``. What the second sends and what it returns or
raises must be what botocore sends, returns and raises: the same JSON document and
headers, a signature the emulator accepts, the same errors (a refused condition with
the item as it was, SQS's query-compatible codes), the same retries under throttling
and dropped connections.
"""

from __future__ import annotations

import datetime
import json
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import boto3
import pytest

from sqsjobs.aws.transports.aio import AioTransport
from sqsjobs.aws.transports.endpoint import Endpoint
from sqsjobs.aws.transports.lean import LeanSender
from sqsjobs.aws.wire.protocol import AwsError, Call, ConditionFailed, Throttled

from .conftest import FaultyAws
from .faulty_aws import OBSERVER_CONFIG, Fault, FaultPlan
from .local_servers import Peer, Server, reply

SIGNED = ("Authorization", "X-Amz-Date", "amz-sdk-invocation-id", "amz-sdk-request")
# What SigV4Auth adds, or botocore after it: the rest of a request is what it signs.
SIGNED_BY_V4 = (
    "Authorization",
    "X-Amz-Date",
    "X-Amz-Security-Token",
    "amz-sdk-invocation-id",
    "amz-sdk-request",
    "Content-Length",
)


class Sent:
    """The requests a transport's client put on the wire, and which path made each."""

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.lean = 0


@pytest.fixture
async def transport(faulty_aws: FaultyAws) -> AsyncIterator[AioTransport]:
    made = AioTransport(Endpoint(faulty_aws.endpoint, max_attempts=3, lean=True))
    try:
        yield made
    finally:
        await made.aclose()


async def watch(transport: AioTransport, service: Any, monkeypatch: pytest.MonkeyPatch) -> Sent:
    """Record every request of ``transport``'s ``service`` client, and the lean attempts."""
    client, lean = await transport._opened(service)
    assert isinstance(lean, LeanSender)
    sent, attempt = Sent(), lean._attempt
    session = client._endpoint.http_session  # what both paths send through
    assert lean._http is session
    monkeypatch.setattr(session, "send", recording(sent, session.send))

    async def counting(*args: Any) -> Any:
        sent.lean += 1
        return await attempt(*args)

    monkeypatch.setattr(lean, "_attempt", counting)
    return sent


def recording(sent: Sent, send: Callable[[Any], Any]) -> Callable[[Any], Any]:
    async def recorded(request: Any) -> Any:
        sent.requests.append(request)
        return await send(request)

    return recorded


@pytest.fixture
def table(faulty_aws: FaultyAws) -> str:
    name = f"lean-{uuid.uuid4().hex[:8]}"
    dynamodb = boto3.client("dynamodb", endpoint_url=faulty_aws.endpoint, config=OBSERVER_CONFIG)
    dynamodb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    return name


@pytest.fixture
def queue(faulty_aws: FaultyAws) -> str:
    sqs = boto3.client("sqs", endpoint_url=faulty_aws.endpoint, config=OBSERVER_CONFIG)
    url: str = sqs.create_queue(QueueName=f"lean-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    return url


def update(table: str, key: str, now: float) -> Call:
    return Call(
        "dynamodb",
        "update_item",
        {
            "TableName": table,
            "Key": {"pk": {"S": key}},
            "UpdateExpression": "SET #s = :s, updated_at = :now ADD attempts :one",
            "ConditionExpression": "attribute_not_exists(#s) OR #s = :s",
            "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": {
                ":s": {"S": "running"},
                ":now": {"N": repr(now)},
                ":one": {"N": "1"},
            },
            "ReturnValues": "ALL_NEW",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        },
    )


def without_metadata(reply: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in reply.items() if name != "ResponseMetadata"}


def unsigned(request: Any) -> dict[str, str]:
    return {name: value for name, value in request.headers.items() if name not in SIGNED}


def signed_headers(request: Any) -> str:
    authorization = request.headers["Authorization"]
    authorization = authorization.decode() if isinstance(authorization, bytes) else authorization
    return authorization.partition("SignedHeaders=")[2].partition(",")[0]


async def test_a_lean_update_sends_what_botocore_sends_and_reads_its_reply(
    transport: AioTransport, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = await watch(transport, "dynamodb", monkeypatch)
    now = time.time()
    first = await transport(update(table, "ünï-1", now))
    assert sent.lean == 0  # learnt through aiobotocore
    second = await transport(update(table, "ünï-1", now))
    assert sent.lean == 1
    ordinary, lean = sent.requests
    assert (lean.url, lean.method) == (ordinary.url, ordinary.method)
    assert json.loads(lean.body) == json.loads(ordinary.body)
    assert unsigned(lean) == unsigned(ordinary)
    assert signed_headers(lean) == signed_headers(ordinary)
    assert lean.headers["amz-sdk-request"] == ordinary.headers["amz-sdk-request"]
    assert first["Attributes"]["attempts"] == {"N": "1"}
    assert second["Attributes"]["attempts"] == {"N": "2"}
    assert without_metadata(second).keys() == without_metadata(first).keys()
    assert second["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert second["ResponseMetadata"]["RetryAttempts"] == 0


async def test_a_refused_condition_comes_back_with_the_item_as_botocore_gives_it(
    transport: AioTransport, table: str
) -> None:
    now = time.time()
    await transport(update(table, "done-1", now))
    moved = Call(
        "dynamodb",
        "update_item",
        {
            "TableName": table,
            "Key": {"pk": {"S": "done-1"}},
            "UpdateExpression": "SET #s = :done",
            "ConditionExpression": "#s = :queued",
            "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": {":done": {"S": "done"}, ":queued": {"S": "queued"}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        },
    )
    refusals = []
    for _ in range(2):  # aiobotocore, then the lean path
        with pytest.raises(ConditionFailed) as refused:
            await transport(moved)
        refusals.append(refused.value)
    ordinary, lean = refusals
    assert lean.item == ordinary.item
    assert lean.item is not None and lean.item["status"] == {"S": "running"}
    assert type(lean.cause) is type(ordinary.cause)
    assert type(lean.cause).__name__ == "ConditionalCheckFailedException"
    assert lean.cause.response["Error"] == ordinary.cause.response["Error"]  # type: ignore[attr-defined]
    assert str(lean.cause) == str(ordinary.cause)


async def test_after_call_handlers_see_lean_replies_as_they_see_botocores(
    transport: AioTransport, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``after-call`` (which releases retry quota) and the client's own handlers hear of
    every lean reply, as of an ordinary one: the status, the parsed reply."""
    client, _ = await transport._opened("dynamodb")
    heard: list[tuple[str, int, str]] = []

    def after_call(http_response: Any, parsed: Any, model: Any, **kwargs: Any) -> None:
        heard.append((model.name, http_response.status_code, parsed["Attributes"]["status"]["S"]))

    client.meta.events.register("after-call.dynamodb.UpdateItem", after_call)
    sent = await watch(transport, "dynamodb", monkeypatch)
    for n in range(3):  # the first one learns the route
        await transport(update(table, f"heard-{n}", time.time()))
    assert heard == [("UpdateItem", 200, "running")] * 3
    assert sent.lean == 2


async def test_sqs_errors_keep_their_query_compatible_codes(
    transport: AioTransport, queue: str
) -> None:
    missing = Call("sqs", "receive_message", {"QueueUrl": f"{queue}-gone", "WaitTimeSeconds": 0})
    await transport(Call("sqs", "receive_message", {"QueueUrl": queue, "WaitTimeSeconds": 0}))
    errors = []
    for _ in range(2):  # the route is learnt: both of these are lean
        with pytest.raises(AwsError) as refused:
            await transport(missing)
        errors.append(refused.value)
    client, _ = await transport._opened("sqs")
    with pytest.raises(client.exceptions.QueueDoesNotExist) as direct:
        await client.receive_message(QueueUrl=f"{queue}-gone", WaitTimeSeconds=0)
    assert {e.code for e in errors} == {direct.value.response["Error"]["Code"]}
    assert {type(e.cause) for e in errors} == {type(direct.value)}


async def test_a_message_goes_through_the_lean_path_intact(
    transport: AioTransport, queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = await watch(transport, "sqs", monkeypatch)
    receive = {"QueueUrl": queue, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 0}
    assert "Messages" not in await transport(Call("sqs", "receive_message", receive))
    bodies = ['{"id": "jöb-1", "queue": "default"}', '{"id": "jöb-2", "queue": "default"}']
    for body in bodies:
        await transport(Call("sqs", "send_message", {"QueueUrl": queue, "MessageBody": body}))
    assert sent.lean == 1
    received: list[dict[str, Any]] = []
    while len(received) < 2:
        received += (await transport(Call("sqs", "receive_message", receive))).get("Messages", [])
    assert sorted(m["Body"] for m in received) == bodies
    for i, message in enumerate(received):
        entries = [{"Id": f"m-{i}", "ReceiptHandle": message["ReceiptHandle"]}]
        deleted = await transport(
            Call("sqs", "delete_message_batch", {"QueueUrl": queue, "Entries": entries})
        )
        assert [e["Id"] for e in deleted["Successful"]] == [f"m-{i}"]
    assert sent.lean >= 3  # the second send, every receive after the first, the second delete
    assert "Messages" not in await transport(Call("sqs", "receive_message", receive))


async def test_throttling_is_retried_as_botocore_retries_it(
    transport: AioTransport, table: str, faulty_aws: FaultyAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    await transport(update(table, "busy-1", time.time()))
    sent = await watch(transport, "dynamodb", monkeypatch)
    plan = FaultPlan(kinds=(Fault.THROTTLE,), first_attempts=True)
    with faulty_aws.injector.faults(plan) as injector:
        reply = await transport(update(table, "busy-1", time.time()))
        assert (injector.injected.total(), injector.eligible.total()) == (1, 2)
    assert sent.lean == 2
    assert b"attempt=2;" in sent.requests[1].headers["amz-sdk-request"]
    assert reply["ResponseMetadata"]["RetryAttempts"] == 1
    assert reply["Attributes"]["attempts"] == {"N": "2"}
    always = FaultPlan(rate=1.0, kinds=(Fault.THROTTLE,))
    with faulty_aws.injector.faults(always) as injector, pytest.raises(Throttled) as refused:
        await transport(update(table, "busy-1", time.time()))
    lean_attempts = injector.eligible.total()
    client, _ = await transport._opened("dynamodb")
    with faulty_aws.injector.faults(always) as injector, pytest.raises(Exception) as direct:
        await client.update_item(**update(table, "busy-1", time.time()).params)
    assert lean_attempts == injector.eligible.total() > 1  # as many tries as botocore makes
    assert refused.value.code == "ProvisionedThroughputExceededException"
    assert type(refused.value.cause) is type(direct.value)


@pytest.mark.parametrize("fault", [Fault.DROP, Fault.LOST_RESPONSE, Fault.SERVER_ERROR])
async def test_a_failed_attempt_is_retried_on_the_lean_path(
    transport: AioTransport, table: str, faulty_aws: FaultyAws, fault: Fault
) -> None:
    await transport(update(table, f"{fault}-1", time.time()))
    plan = FaultPlan(kinds=(fault,), first_attempts=True)
    with faulty_aws.injector.faults(plan) as injector:
        await transport(update(table, f"{fault}-2", time.time()))
        assert (injector.injected.total(), injector.eligible.total()) == (1, 2)


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


async def test_an_unreachable_endpoint_fails_the_lean_path_as_it_fails_botocore(
    faulty_aws: FaultyAws,  # its environment: a region and credentials, as for AWS
) -> None:
    transport = AioTransport(Endpoint(closed_port(), max_attempts=1, lean=True))
    try:
        failures = []
        for _ in range(2):  # aiobotocore (the route is noted on the way out), then lean
            with pytest.raises(AwsError) as failed:
                await transport(update("lean-nowhere", "k", time.time()))
            failures.append(failed.value)
        _, lean = await transport._opened("dynamodb")
        assert lean is not None and "update_item" in lean._routes
        assert [f.code for f in failures] == ["EndpointConnectionError"] * 2
        assert type(failures[0].cause) is type(failures[1].cause)
    finally:
        await transport.aclose()


async def test_binary_values_take_botocore_paths_both_ways(
    transport: AioTransport, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bytes are no JSON (botocore encodes them), and a reply's blobs botocore decodes."""
    sent = await watch(transport, "dynamodb", monkeypatch)
    get: Callable[[], Call] = lambda: Call(  # noqa: E731
        "dynamodb", "get_item", {"TableName": table, "Key": {"pk": {"S": "blob-1"}}}
    )
    item = {"pk": {"S": "blob-1"}, "data": {"B": b"\x00\xffsq"}}
    for _ in range(2):
        await transport(Call("dynamodb", "put_item", {"TableName": table, "Item": item}))
    assert sent.lean == 0  # both puts through aiobotocore
    first, second = await transport(get()), await transport(get())
    assert sent.lean == 1
    assert first["Item"]["data"] == second["Item"]["data"] == {"B": b"\x00\xffsq"}


REPLIES = {
    ("dynamodb", "UpdateItem"): {
        "Attributes": {
            "pk": {"S": "job#ünï"},
            "attempts": {"N": "3"},
            "run_at": {"N": "1764633600.123457"},
            "payload": {"S": '{"n": [1, 2.5, "x", null], "none": null, "back\\\\": null}'},
            "tags": {"L": [{"S": "a"}, {"M": {"k": {"BOOL": True}}}]},
            "gone": {"NULL": True},
        },
        "ConsumedCapacity": {"TableName": "t", "CapacityUnits": 1.0},
    },
    ("sqs", "ReceiveMessage"): {
        "Messages": [
            {
                "MessageId": "5fea7756-0ea4-451a-a703-a558b933e274",
                "ReceiptHandle": "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a...",
                "MD5OfBody": "fafb00f5732ab283681e124bf8747ed1",
                "Body": '{"id": "jöb-1", "queue": "default"}',
                "Attributes": {"ApproximateReceiveCount": "2", "SentTimestamp": "1764633600123"},
                "MessageAttributes": {"tenant": {"StringValue": "t-1", "DataType": "String"}},
            }
        ]
    },
    ("sqs", "DeleteMessageBatch"): {
        "Successful": [{"Id": "m-0"}],
        "Failed": [{"Id": "m-1", "SenderFault": True, "Code": "ReceiptHandleIsInvalid"}],
    },
}


@pytest.mark.parametrize(("service", "operation"), sorted(REPLIES))
def test_a_plain_reply_reads_as_botocore_reads_it(service: str, operation: str) -> None:
    """What ``json.loads`` gives is what botocore's parser gives, metadata aside."""
    from botocore.parsers import create_parser
    from botocore.session import get_session

    from sqsjobs.aws.transports.lean import _changed_by_botocore, _verbatim

    model = get_session().get_service_model(service).operation_model(operation)
    body = json.dumps(REPLIES[(service, operation)]).encode()
    assert not _changed_by_botocore(body, _verbatim(model.output_shape))
    response = {"status_code": 200, "headers": {"x-amzn-requestid": "r-1"}, "body": body}
    parsed = create_parser("json").parse(response, model.output_shape)
    assert without_metadata(parsed) == json.loads(body)


@pytest.mark.parametrize(
    ("service", "operation", "reply"),
    [
        ("dynamodb", "UpdateItem", {"Attributes": {"data": {"B": "AP9zcQ=="}}}),
        ("dynamodb", "GetItem", {"Item": {"set": {"BS": ["AP9zcQ=="]}}}),
        ("dynamodb", "UpdateItem", {"Attributes": {"pk": {"S": "k"}}, "ConsumedCapacity": None}),
        ("dynamodb", "UpdateItem", {"Attributes": {"back\\": {"S": None}}}),
        (
            "sqs",
            "ReceiveMessage",
            {"Messages": [{"MessageAttributes": {"b": {"BinaryValue": "AP9zcQ=="}}}]},
        ),
    ],
)
def test_a_reply_botocore_would_change_is_left_to_botocore(
    service: str, operation: str, reply: dict[str, Any]
) -> None:
    """Blobs (decoded by botocore) and nulls (dropped by it) send a reply to its parser."""
    from botocore.session import get_session

    from sqsjobs.aws.transports.lean import _changed_by_botocore, _verbatim

    model = get_session().get_service_model(service).operation_model(operation)
    for body in (json.dumps(reply), json.dumps(reply, separators=(",", ":"))):
        assert _changed_by_botocore(body.encode(), _verbatim(model.output_shape))


async def test_an_unsigned_client_sends_unsigned_lean_requests() -> None:
    """A client configured ``UNSIGNED`` (botocore signs nothing) stays unsigned here too.

    The client talks to a loopback server that notes each request's headers and answers
    what DynamoDB answers a ``GetItem``, not to the emulator: how an emulator routes a
    request without a credential scope is its own business (moto 5.2.6 answers such a
    request 500 where 5.2.5 answered S3's XML), and not what this test is about.
    """
    from aiobotocore.config import AioConfig
    from aiobotocore.session import get_session
    from botocore import UNSIGNED

    item = {"pk": {"S": "ünï-open-1"}, "n": {"N": "7"}}
    body = json.dumps({"Item": item}).encode()

    async def dynamodb(peer: Peer, server: Server) -> None:
        while (request := await peer.request()) is not None:
            server.requests.append(request)
            peer.writer.write(reply(body))
            await peer.writer.drain()

    server = Server(dynamodb)
    await server.start()
    config = AioConfig(signature_version=UNSIGNED, retries={"mode": "standard"})
    try:
        async with get_session().create_client(
            "dynamodb",
            endpoint_url=f"http://127.0.0.1:{server.port}",
            region_name="eu-west-1",
            config=config,
        ) as client:
            lean = LeanSender.of(client)
            assert lean is not None
            params = {"TableName": "jobs", "Key": {"pk": {"S": "ünï-open-1"}}}
            replies = [await lean("get_item", params) for _ in range(2)]
            assert "get_item" in lean._routes  # the second went the lean way
    finally:
        await server.stop()
    heads = [head.lower() for head, _ in server.requests]
    assert len(heads) == 2
    assert all(b"\r\nx-amz-target: dynamodb_20120810.getitem" in head for head in heads)
    assert [b"\r\nauthorization:" in head for head in heads] == [False, False]
    assert [b"\r\nx-amz-date:" in head for head in heads] == [False, False]
    assert [json.loads(sent) for _, sent in server.requests] == [params, params]
    assert [without_metadata(r) for r in replies] == [{"Item": item}, {"Item": item}]


async def test_the_lean_signature_is_the_one_botocore_makes_for_the_request(
    transport: AioTransport, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At one instant, the lean request's ``Authorization`` is what ``SigV4Auth`` signs
    for its URL, headers and body (the emulator checks no signature)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    await transport(update(table, "sig-1", time.time()))
    sent = await watch(transport, "dynamodb", monkeypatch)
    instant = datetime.datetime.fromtimestamp(time.time(), datetime.UTC).replace(tzinfo=None)
    monkeypatch.setattr("botocore.auth.get_current_datetime", lambda: instant)
    await transport(update(table, "sig-1", time.time()))
    (lean,) = sent.requests
    client, _ = await transport._opened("dynamodb")
    plain = {n: v.decode() for n, v in lean.headers.items() if n not in SIGNED_BY_V4}
    request = AWSRequest(method="POST", url=lean.url, data=lean.body, headers=plain)
    credentials = await client._request_signer._credentials.get_frozen_credentials()
    SigV4Auth(credentials, "dynamodb", client.meta.region_name).add_auth(request)
    assert lean.headers["Authorization"].decode() == request.headers["Authorization"]
    assert lean.headers["X-Amz-Date"].decode() == request.headers["X-Amz-Date"]


async def test_another_signer_signs_lean_requests_as_botocore_runs_it(
    transport: AioTransport, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A signer class other than plain SigV4 (a subclass, here) is run on an AWSRequest."""
    from botocore.auth import SigV4Auth

    class Marked(SigV4Auth):  # type: ignore[misc]
        def add_auth(self, request: Any) -> None:
            super().add_auth(request)
            request.headers["X-Signed-By"] = "marked-ünï".encode()

    await transport(update(table, "other-1", time.time()))
    sent = await watch(transport, "dynamodb", monkeypatch)
    client, _ = await transport._opened("dynamodb")
    signer = client._request_signer
    original = signer.get_auth_instance

    async def marked(**kwargs: Any) -> Any:
        auth = await original(**kwargs)
        return Marked(auth.credentials, auth._service_name, auth._region_name)

    monkeypatch.setattr(signer, "get_auth_instance", marked)
    reply = await transport(update(table, "other-1", time.time()))
    assert sent.lean == 1
    (lean,) = sent.requests
    assert lean.headers["X-Signed-By"] == "marked-ünï".encode()
    assert lean.headers["Authorization"].startswith(b"AWS4-HMAC-SHA256 Credential=")
    assert reply["Attributes"]["attempts"] == {"N": "2"}


async def test_a_first_reply_skips_only_what_the_retry_handler_would_pass(
    transport: AioTransport, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2xx first reply leaves the standard handler out, not another; a wrong CRC32 is
    retried as botocore retries it."""
    await transport(update(table, "crc-1", time.time()))
    client, lean = await transport._opened("dynamodb")
    assert isinstance(lean, LeanSender)
    endpoint = client._endpoint
    asked: list[int] = []  # attempts for which the lean path emitted needs-retry
    needs_retry = endpoint._needs_retry

    async def counted(attempts: int, *args: Any) -> Any:
        asked.append(attempts)
        return await needs_retry(attempts, *args)

    monkeypatch.setattr(endpoint, "_needs_retry", counted)
    observed: list[int] = []

    def observer(attempts: int, **kwargs: Any) -> None:
        observed.append(attempts)

    client.meta.events.register("needs-retry.dynamodb", observer, unique_id="seen")  # after it
    sent = await watch(transport, "dynamodb", monkeypatch)
    for _ in range(2):  # the first finds the handlers (registering dropped the cache)
        reply = await transport(update(table, "crc-1", time.time()))
    assert (asked, observed, sent.lean) == ([1, 1], [1, 1], 2)  # another handler: the event
    assert reply["Attributes"]["attempts"] == {"N": "3"}
    client.meta.events.unregister("needs-retry.dynamodb", unique_id="seen")
    await transport(update(table, "crc-1", time.time()))
    assert asked == [1, 1, 1]  # the emitter's cache was dropped: the event finds the handlers
    reply = await transport(update(table, "crc-1", time.time()))
    assert (asked, sent.lean) == ([1, 1, 1], 4)  # the standard handler alone would pass it
    assert reply["ResponseMetadata"]["RetryAttempts"] == 0
    asked.clear()
    send = lean._http.send
    corrupted: list[bytes] = []

    async def corrupting(request: Any) -> Any:
        response = await send(request)
        if not corrupted:
            corrupted.append(request.headers["amz-sdk-request"])
            response.headers["x-amz-crc32"] = "12345"
        return response

    monkeypatch.setattr(lean._http, "send", corrupting)
    reply = await transport(update(table, "crc-1", time.time()))
    assert corrupted == [b"attempt=1"]
    assert asked == [1, 2]  # the handler saw the wrong checksum, and then the good one
    assert reply["ResponseMetadata"]["RetryAttempts"] == 1
    assert reply["Attributes"]["attempts"] == {"N": "7"}  # both attempts wrote
    assert sent.lean == 6
