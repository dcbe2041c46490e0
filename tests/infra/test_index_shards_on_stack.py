"""The IndexShards parameter reaches the store: template output, from_stack, agreement.

Stacks sharing one table must give one shard count; a store reading fewer shards than
another writes would miss that one's jobs, so ``from_stack`` refuses stacks that disagree.
"""

from __future__ import annotations

import zlib
from typing import Any

import boto3
import pytest

from sqsjobs import EnqueueRequest, JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.store.config import stack_arguments
from sqsjobs.aws.wire.protocol import Call
from sqsjobs.infra import deploy_stack

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch.+Alarm:UserWarning")


def _deploy_pair(endpoint: str, stack_name: str, main: str, extra: str) -> tuple[str, str]:
    first = f"{stack_name}-main"
    outputs = deploy_stack(first, parameters={"IndexShards": main}, endpoint_url=endpoint)
    assert outputs["IndexShards"] == main
    second = f"{stack_name}-reports"
    parameters = {"QueueName": "reports", "TableName": outputs["TableName"], "IndexShards": extra}
    made = deploy_stack(
        second, template="sqsjobs-queue", parameters=parameters, endpoint_url=endpoint
    )
    assert made["IndexShards"] == extra
    return first, second


async def test_from_stack_writes_with_the_stacks_shard_count(
    aws_endpoint: str, stack_name: str
) -> None:
    main, extra = _deploy_pair(aws_endpoint, stack_name, "16", "16")
    store = SqsJobStore.from_stack(f"{main},{extra}", endpoint_url=aws_endpoint)
    dynamodb = boto3.client("dynamodb", endpoint_url=aws_endpoint)
    try:
        requests = [
            EnqueueRequest("invoice.render", {"n": n, "note": "größe"}, queue=q, tenant=t)
            for n in range(50)
            for q, t in (("default", "acme"), ("reports", "globex"))
        ]
        written = [r.job for r in await JobQueue(store).enqueue_many(requests)]
        for job in written:
            key = {"pk": {"S": f"job#{job.id}"}}
            item = dynamodb.get_item(TableName=store.table_name, Key=key)["Item"]
            assert item["list_pk"]["S"] == f"{job.queue}#{zlib.crc32(job.id.encode()) % 16}"
        shards = {zlib.crc32(job.id.encode()) % 16 for job in written}
        assert max(shards) >= 4  # past what the default four would have used
        stats = {s.queue: s.counts for s in await store.stats()}
        assert [stats[q][JobStatus.QUEUED] for q in ("default", "reports")] == [50, 50]
    finally:
        dynamodb.close()
        await store.aclose()


def test_stacks_on_one_table_with_different_shard_counts_are_refused(
    aws_endpoint: str, stack_name: str
) -> None:
    main, extra = _deploy_pair(aws_endpoint, stack_name, "8", "4")
    with pytest.raises(ValueError, match=r"IndexShards 8 and 4.*may only grow"):
        SqsJobStore.from_stack(f"{main},{extra}", endpoint_url=aws_endpoint)


def _answering(outputs: dict[str, dict[str, str]]) -> Any:
    def send(call: Call) -> dict[str, Any]:
        found = outputs[call.params["StackName"]]
        return {
            "Stacks": [{"Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in found.items()]}]
        }

    return send


BASE = {"TableName": "jobs", "QueueUrls": "default=https://sqs.example/jobs"}


def test_a_stack_made_before_the_output_reads_as_four_shards() -> None:
    old = _answering({"old": BASE, "new": {**BASE, "IndexShards": "4"}})
    assert stack_arguments("old", old)["index_shards"] == 4
    assert stack_arguments("old,new", old)["index_shards"] == 4
    wider = _answering({"old": BASE, "new": {**BASE, "IndexShards": "8"}})
    with pytest.raises(ValueError, match="'old' and 'new'"):
        stack_arguments("old,new", wider)


@pytest.mark.parametrize("value", ["", "0", "eight", "1000"])
def test_a_stack_output_that_is_not_a_shard_count_is_refused(value: str) -> None:
    send = _answering({"app": {**BASE, "IndexShards": value}})
    with pytest.raises(ValueError, match=r"IndexShards|index_shards"):
        stack_arguments("app", send)
