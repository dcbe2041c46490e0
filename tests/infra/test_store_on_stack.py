"""The store runs on what the templates deploy: from_stack, enqueue, a worker, completed.

This is the check that the outputs are the ones ``SqsJobStore.from_stack`` reads and
that the deployed table, index and queues carry the store's whole round trip.
"""

from __future__ import annotations

from typing import Any

import pytest

from sqsjobs import JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.store.config import STACK_OUTPUTS
from sqsjobs.infra import deploy_stack

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch.+Alarm:UserWarning")


def test_outputs_include_what_from_stack_reads(aws_endpoint: str, stack_name: str) -> None:
    outputs = deploy_stack(stack_name, endpoint_url=aws_endpoint)
    assert set(STACK_OUTPUTS) <= set(outputs)


@pytest.mark.parametrize("template", ["sqsjobs", "sqsjobs-queue"])
async def test_a_job_runs_to_completion_on_a_deployed_stack(
    aws_endpoint: str, stack_name: str, template: str
) -> None:
    parameters = {"QueueName": "reports"}
    if template == "sqsjobs-queue":
        table = deploy_stack(f"{stack_name}-table", endpoint_url=aws_endpoint)["TableName"]
        parameters["TableName"] = table
    deploy_stack(stack_name, template=template, parameters=parameters, endpoint_url=aws_endpoint)
    store = SqsJobStore.from_stack(stack_name, endpoint_url=aws_endpoint, wait_time=1.0)
    try:
        assert set(store.dead_letter_queue_urls) == {"reports"}
        queue = JobQueue(store, default_queue="reports")
        ran: list[Any] = []

        async def build(ctx: JobContext) -> dict[str, int]:
            ran.append(ctx.payload)
            return {"pages": 3}

        enqueued = await queue.enqueue("reports.build", {"month": "2030-01"})
        worker = JobWorker(queue, {"reports.build": build}, queues=["reports"])
        assert await worker.run_once()
        job = await queue.get(enqueued.job.id)
        assert job is not None
        assert (job.status, job.result, ran) == (
            JobStatus.COMPLETED,
            {"pages": 3},
            [{"month": "2030-01"}],
        )
    finally:
        await store.aclose()


async def test_one_store_serves_the_queues_of_several_stacks(
    aws_endpoint: str, stack_name: str
) -> None:
    main = f"{stack_name}-main"
    table = deploy_stack(main, endpoint_url=aws_endpoint)["TableName"]
    extra = f"{stack_name}-reports"
    parameters = {"QueueName": "reports", "TableName": table}
    deploy_stack(extra, template="sqsjobs-queue", parameters=parameters, endpoint_url=aws_endpoint)
    store = SqsJobStore.from_stack(f"{main}, {extra}", endpoint_url=aws_endpoint, wait_time=1.0)
    try:
        assert (store.table_name, sorted(store.queue_urls)) == (table, ["default", "reports"])
        assert sorted(store.dead_letter_queue_urls) == ["default", "reports"]
        queue = JobQueue(store)
        jobs = [(await queue.enqueue("a", queue=name)).job for name in ("default", "reports")]
        worker = JobWorker(queue, {"a": lambda ctx: ctx.job.queue}, queues=["reports", "default"])
        assert await worker.run_once() and await worker.run_once()
        done = [await queue.get(job.id) for job in jobs]
        assert [(j.status, j.result) for j in done if j] == [
            (JobStatus.COMPLETED, "default"),
            (JobStatus.COMPLETED, "reports"),
        ]
    finally:
        await store.aclose()


def test_stacks_on_different_tables_are_refused(aws_endpoint: str, stack_name: str) -> None:
    deploy_stack(f"{stack_name}-one", endpoint_url=aws_endpoint)
    deploy_stack(f"{stack_name}-two", endpoint_url=aws_endpoint)
    with pytest.raises(ValueError, match="one store serves one table"):
        SqsJobStore.from_stack(f"{stack_name}-one,{stack_name}-two", endpoint_url=aws_endpoint)


@pytest.mark.parametrize("template", ["sqsjobs", "sqsjobs-queue"])
async def test_a_fifo_stack_runs_a_group_in_order(
    aws_endpoint: str, stack_name: str, template: str
) -> None:
    import boto3

    parameters = {"QueueName": "ledger", "FifoQueue": "true"}
    if template == "sqsjobs-queue":
        table = deploy_stack(f"{stack_name}-table", endpoint_url=aws_endpoint)["TableName"]
        parameters["TableName"] = table
    deploy_stack(stack_name, template=template, parameters=parameters, endpoint_url=aws_endpoint)
    store = SqsJobStore.from_stack(stack_name, endpoint_url=aws_endpoint, wait_time=1.0)
    sqs = boto3.client("sqs", endpoint_url=aws_endpoint)
    try:
        url = store.queue_urls["ledger"]
        assert url.endswith(f"{stack_name}-ledger.fifo")
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        assert (attributes["FifoQueue"], attributes["ContentBasedDeduplication"]) == (
            "true",
            "false",
        )
        store.sync.describe("ledger")
        assert store.dead_letter_queue_urls["ledger"].endswith("-ledger-dlq.fifo")
        queue = JobQueue(store, default_queue="ledger")
        ran: list[int] = []

        async def post(ctx: JobContext) -> None:
            ran.append(ctx.payload["n"])

        for n in range(3):
            await queue.enqueue("ledger.post", {"n": n}, tenant="acme")
        worker = JobWorker(queue, {"ledger.post": post}, queues=["ledger"], concurrency=3)
        for _ in range(3):
            assert await worker.run_once()
            await store.aclose()  # the batched delete goes out, unlocking the group
        assert ran == [0, 1, 2]
    finally:
        sqs.close()
        await store.aclose()
