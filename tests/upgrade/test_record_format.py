"""What each record format writes, and how a deployment says which one to write.

Format 1 is what 0.1 reads (the payload inline, ``by_status`` keys); format 2 is what
only 0.2 reads (payloads compressed or in body items, ``by_queue`` keys alone); format 3
puts what format 2 does and moves ended jobs out of the open partitions, where 0.2 looks
(``tests/aws/test_ended_partitions.py``). New stacks write 3; an upgraded stack keeps
the format it writes (1 if it has none) until told.
"""

from __future__ import annotations

import uuid
from typing import Any

import boto3
import pytest

from sqsjobs import JobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.infra import StackOutputsMissing, deploy_stack
from sqsjobs.infra._deploy import Deployment
from sqsjobs.testing.payloads import random_document
from tests.aws.emulator import unique_prefix

from .previous import previous_file

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch.+Alarm:UserWarning")

LONG = {"order": "Zürich-7", **random_document(3_000, seed=5)}


@pytest.fixture(scope="module")
def made(aws_endpoint: str) -> Any:
    store = SqsJobStore.create(unique_prefix(), endpoint_url=aws_endpoint)
    yield store
    store.close()


def store_like(made: SqsJobStore, endpoint: str, **options: Any) -> SqsJobStore:
    return SqsJobStore(
        table_name=made.table_name,
        queue_urls=made.queue_urls,
        endpoint_url=endpoint,
        **options,
    )


async def written(store: SqsJobStore, endpoint: str) -> dict[str, Any]:
    """The record a long payload's enqueue writes through ``store``."""
    job = (await JobQueue(store).enqueue("order.pack", LONG)).job
    dynamodb = boto3.client("dynamodb", endpoint_url=endpoint)
    try:
        item: dict[str, Any] = dynamodb.get_item(
            TableName=store.table_name, Key={"pk": {"S": f"job#{job.id}"}}, ConsistentRead=True
        )["Item"]
    finally:
        dynamodb.close()
    await store.aclose()
    return item


def is_format_1(item: dict[str, Any]) -> bool:
    return (
        "payload" in item
        and {"gsi_pk", "gsi_sk", "list_pk"} <= set(item)
        and item["v"] == {"N": "1"}
    )


def is_format_2(item: dict[str, Any]) -> bool:
    return "payload" not in item and "body_pk" in item and "gsi_sk" not in item


async def test_each_format_writes_what_its_readers_read(made: SqsJobStore, aws_endpoint: str):
    assert is_format_1(await written(store_like(made, aws_endpoint, record_format=1), aws_endpoint))
    assert is_format_2(await written(store_like(made, aws_endpoint, record_format=2), aws_endpoint))
    default = await written(store_like(made, aws_endpoint), aws_endpoint)
    assert is_format_2(default) and default["v"] == {"N": "3"}  # format 3 puts what 2 does


@pytest.mark.parametrize("value", [0, 4, "2", 2.5, True, None])
def test_a_record_format_that_is_not_1_2_or_3_is_refused(
    made: SqsJobStore, aws_endpoint: str, value: object
) -> None:
    with pytest.raises(ValueError, match=r"record_format must be 1, 2 or 3, got .*0\.1.*0\.2"):
        store_like(made, aws_endpoint, record_format=value)


async def test_from_env_reads_the_record_format(
    made: SqsJobStore, aws_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    urls = ",".join(f"{queue}={url}" for queue, url in made.queue_urls.items())
    monkeypatch.setenv("SQSJOBS_TABLE", made.table_name)
    monkeypatch.setenv("SQSJOBS_QUEUES", urls)
    monkeypatch.setenv("SQSJOBS_RECORD_FORMAT", "1")
    item = await written(SqsJobStore.from_env(endpoint_url=aws_endpoint), aws_endpoint)
    assert is_format_1(item)
    monkeypatch.setenv("SQSJOBS_RECORD_FORMAT", "two")
    with pytest.raises(ValueError, match="record_format must be 1, 2 or 3, got 'two'"):
        SqsJobStore.from_env(endpoint_url=aws_endpoint)


async def test_a_stack_deployed_by_0_1_keeps_format_1_through_the_upgrade_until_told(
    aws_endpoint: str,
) -> None:
    name = f"t{uuid.uuid4().hex[:12]}"
    cloudformation = boto3.client("cloudformation", endpoint_url=aws_endpoint)
    # As 0.1's `sqsjobs infra deploy` made it: its own template, every parameter given.
    Deployment(cloudformation, name).run(previous_file("src/sqsjobs/infra/sqsjobs.yaml"), {})
    before = SqsJobStore.from_stack(name, endpoint_url=aws_endpoint)  # no RecordFormat output
    assert is_format_1(await written(before, aws_endpoint))

    # This release's template. (An update that changes the table makes the emulator drop
    # it from the stack, TableName output and all, and the deploy fail saying so; the
    # store is built from the first deploy's table here.)
    outputs = emulated_deploy(name, aws_endpoint)
    assert outputs["RecordFormat"] == "1"
    upgraded = store_like(before, aws_endpoint, record_format=int(outputs["RecordFormat"]))
    assert is_format_1(await written(upgraded, aws_endpoint))

    outputs = emulated_deploy(name, aws_endpoint, RecordFormat="2")
    assert outputs["RecordFormat"] == "2"
    again = emulated_deploy(name, aws_endpoint)  # a later deploy keeps it
    assert again["RecordFormat"] == "2"
    cloudformation.close()


def emulated_deploy(name: str, endpoint: str, **parameters: str) -> dict[str, str]:
    """``deploy_stack``'s outputs, on a stack the emulator has dropped 0.1's table and
    policies from (docs/how-to/testing.md, "Testing with the emulator")."""
    with pytest.raises(StackOutputsMissing) as dropped:
        deploy_stack(name, endpoint_url=endpoint, parameters=parameters)
    assert "TableName" in dropped.value.missing
    return dropped.value.outputs


async def test_a_new_stack_writes_format_3(aws_endpoint: str) -> None:
    name = f"t{uuid.uuid4().hex[:12]}"
    assert deploy_stack(name, endpoint_url=aws_endpoint)["RecordFormat"] == "3"
    store = SqsJobStore.from_stack(name, endpoint_url=aws_endpoint)
    item = await written(store, aws_endpoint)
    assert is_format_2(item) and item["v"] == {"N": "3"}


async def test_a_stack_writing_format_2_keeps_it_through_the_upgrade_until_told(
    aws_endpoint: str,
) -> None:
    name = f"t{uuid.uuid4().hex[:12]}"
    deploy_stack(name, endpoint_url=aws_endpoint, parameters={"RecordFormat": "2"})
    assert deploy_stack(name, endpoint_url=aws_endpoint)["RecordFormat"] == "2"
    item = await written(SqsJobStore.from_stack(name, endpoint_url=aws_endpoint), aws_endpoint)
    assert item["v"] == {"N": "2"}
    told = deploy_stack(name, endpoint_url=aws_endpoint, parameters={"RecordFormat": "3"})
    assert told["RecordFormat"] == "3"
