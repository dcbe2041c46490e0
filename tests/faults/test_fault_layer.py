"""The fault layer itself: each fault reaches botocore as AWS would deliver it.

Clients here make one attempt (no retries), so each fault shows as the error botocore
raises for it; the last tests give the store's own transports (standard-mode retries)
a fault on every first attempt and see each call succeed on its retry.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError
from botocore.retries.standard import ThrottledRetryableChecker

from sqsjobs.aws.transports.aio import AioTransport
from sqsjobs.aws.transports.boto import BotoTransport
from sqsjobs.aws.transports.endpoint import Endpoint
from sqsjobs.aws.wire.protocol import AwsError, Call

from .conftest import FaultyAws
from .faulty_aws import TRANSIENT, Fault, FaultPlan

ONE_ATTEMPT = Config(retries={"mode": "standard", "max_attempts": 1})


def every(*kinds: Fault, services: frozenset[str] = frozenset({"dynamodb", "sqs"})) -> FaultPlan:
    return FaultPlan(rate=1.0, kinds=kinds, services=services)


@pytest.fixture
def clients(faulty_aws: FaultyAws) -> Iterator[dict[str, Any]]:
    made = {
        service: boto3.client(service, endpoint_url=faulty_aws.endpoint, config=ONE_ATTEMPT)
        for service in ("dynamodb", "sqs", "cloudformation")
    }
    yield made
    for client in made.values():
        client.close()


@pytest.fixture
def table(clients: dict[str, Any]) -> str:
    name = f"faults-{uuid.uuid4().hex[:8]}"
    clients["dynamodb"].create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    return name


def put(clients: dict[str, Any], table: str, key: str) -> None:
    clients["dynamodb"].put_item(
        TableName=table, Item={"pk": {"S": key}}, ConditionExpression="attribute_not_exists(pk)"
    )


def exists(clients: dict[str, Any], table: str, key: str) -> bool:
    reply = clients["dynamodb"].get_item(TableName=table, Key={"pk": {"S": key}})
    return "Item" in reply


def test_throttling_speaks_each_protocol(faulty_aws: FaultyAws, clients: dict[str, Any]) -> None:
    plan = every(Fault.THROTTLE, services=frozenset({"dynamodb", "sqs", "cloudformation"}))
    calls = {
        "dynamodb": ("list_tables", "ProvisionedThroughputExceededException"),  # JSON 1.0
        "sqs": ("list_queues", "ThrottlingException"),  # JSON 1.0, query-compatible
        "cloudformation": ("list_stacks", "Throttling"),  # query protocol, XML
    }
    with faulty_aws.injector.faults(plan):
        for service, (operation, code) in calls.items():
            with pytest.raises(ClientError) as caught:
                getattr(clients[service], operation)()
            error = caught.value.response
            assert (error["Error"]["Code"], error["ResponseMetadata"]["HTTPStatusCode"]) == (
                code,
                400,
            )
            # What botocore's standard retry mode treats as throttling (and backs off for).
            assert code in ThrottledRetryableChecker._THROTTLED_ERROR_CODES


def test_server_errors_are_500s(faulty_aws: FaultyAws, clients: dict[str, Any]) -> None:
    with faulty_aws.injector.faults(every(Fault.SERVER_ERROR)):
        with pytest.raises(ClientError) as dynamodb:
            clients["dynamodb"].list_tables()
        with pytest.raises(ClientError) as sqs:
            clients["sqs"].list_queues()
    assert [e.value.response["ResponseMetadata"]["HTTPStatusCode"] for e in (dynamodb, sqs)] == [
        500,
        500,
    ]
    assert dynamodb.value.response["Error"]["Code"] == "InternalServerError"


def test_a_dropped_request_is_not_applied(
    faulty_aws: FaultyAws, clients: dict[str, Any], table: str
) -> None:
    with faulty_aws.injector.faults(every(Fault.DROP)), pytest.raises(ConnectionClosedError):
        put(clients, table, "dropped")
    assert not exists(clients, table, "dropped")


@pytest.mark.parametrize(
    ("fault", "raised"),
    [(Fault.LOST_RESPONSE, ConnectionClosedError), (Fault.APPLIED_ERROR, ClientError)],
)
def test_a_lost_response_hides_a_write_that_happened(
    faulty_aws: FaultyAws,
    clients: dict[str, Any],
    table: str,
    fault: Fault,
    raised: type[Exception],
) -> None:
    with faulty_aws.injector.faults(every(fault)), pytest.raises(raised):
        put(clients, table, "written")
    assert exists(clients, table, "written")
    with pytest.raises(ClientError) as again:  # what a retry of that request meets
        put(clients, table, "written")
    assert again.value.response["Error"]["Code"] == "ConditionalCheckFailedException"


def test_the_store_clients_retry_every_fault(faulty_aws: FaultyAws) -> None:
    """botocore's standard mode, as the store configures it, retries each transient fault."""
    transport = BotoTransport(Endpoint(faulty_aws.endpoint))
    try:
        for fault, service, operation in zip(
            TRANSIENT, ["sqs", "dynamodb"] * 3, ["list_queues", "list_tables"] * 3, strict=False
        ):
            plan = FaultPlan(kinds=(fault,), first_attempts=True)
            with faulty_aws.injector.faults(plan) as injector:
                transport(Call(service, operation, {}))  # type: ignore[arg-type]
                assert sum(injector.injected.values()) == 1, fault
                assert sum(injector.eligible.values()) == 2, fault  # the first try and a retry
    finally:
        transport.close()


async def test_the_asyncio_clients_retry_a_dropped_connection(faulty_aws: FaultyAws) -> None:
    """aiohttp meets a closed connection differently from urllib3; botocore still retries."""
    transport = AioTransport(Endpoint(faulty_aws.endpoint))
    try:
        for fault in (Fault.DROP, Fault.LOST_RESPONSE):
            plan = FaultPlan(kinds=(fault,), first_attempts=True)
            with faulty_aws.injector.faults(plan) as injector:
                await transport(Call("sqs", "list_queues", {}))
                await transport(Call("dynamodb", "list_tables", {}))
                assert sum(injector.injected.values()) == 2, fault
                assert sum(injector.eligible.values()) == 4, fault
    finally:
        await transport.aclose()


def test_a_limit_ends_the_faults_after_that_many(faulty_aws: FaultyAws, table: str) -> None:
    once = Config(retries={"mode": "standard", "total_max_attempts": 1})
    client = boto3.client("dynamodb", endpoint_url=faulty_aws.endpoint, config=once)
    plan = FaultPlan(rate=1.0, kinds=(Fault.THROTTLE,), actions=frozenset({"PutItem"}), limit=2)
    written = []
    try:
        with faulty_aws.injector.faults(plan) as injector:
            for key in ("first", "second", "third"):
                try:
                    client.put_item(TableName=table, Item={"pk": {"S": key}})
                    written.append(key)
                except ClientError as refused:
                    assert refused.response["Error"]["Code"] == (
                        "ProvisionedThroughputExceededException"
                    )
            assert (injector.injected.total(), injector.eligible.total()) == (2, 3)
    finally:
        client.close()
    assert written == ["third"]


def test_a_denied_request_fails_at_once(faulty_aws: FaultyAws) -> None:
    """What IAM refuses, no retry mends: botocore gives up after the first try."""
    transport = BotoTransport(Endpoint(faulty_aws.endpoint))
    plan = FaultPlan(kinds=(Fault.DENIED,), first_attempts=True)
    try:
        for service, operation in (("sqs", "list_queues"), ("dynamodb", "list_tables")):
            with faulty_aws.injector.faults(plan) as injector, pytest.raises(AwsError) as denied:
                transport(Call(service, operation, {}))  # type: ignore[arg-type]
            assert denied.value.code.startswith("AccessDenied")
            assert sum(injector.eligible.values()) == 1
    finally:
        transport.close()
