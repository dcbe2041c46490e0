"""``sqsjobs infra deploy --ecs-worker | --lambda-worker``: a job stack and its workers in
one command, the worker stack's table, queue and policies taken from the job stack.

The emulator's CloudFormation makes the ECS cluster, service and task definition, and
the Lambda function and its event source mapping (it runs neither); it keeps the
parameters a stack was made with, which is what these tests compare.
"""

from __future__ import annotations

import re
from typing import Any

import boto3
import pytest

from sqsjobs.infra import WorkerSetupError, job_parameters_for, worker_stack
from sqsjobs.infra._templates import parameters_without_default
from tests.aws.emulator import unique_prefix

from .conftest import PLAIN, Env, invoke

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse AWS.+:UserWarning")

IMAGE = "123456789012.dkr.ecr.eu-central-1.amazonaws.com/shop-worker:2026.12.6"
ECS = (
    "--ecs-worker",
    *("-w", f"Image={IMAGE}", "-w", "Registry=shop.jobs:registry"),
    *("-w", "Subnets=subnet-0a1b2c3d4e5f,subnet-1b2c3d4e5f6a", "-w", "SecurityGroups=sg-0f1e2d3c"),
)


@pytest.fixture
def env(aws_endpoint: str) -> Env:
    return {**PLAIN, "AWS_ENDPOINT_URL": aws_endpoint, "SQSJOBS_STACK": None, "COLUMNS": "200"}


def client(service: str, endpoint: str) -> Any:
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1")


def described(endpoint: str, stack: str) -> dict[str, Any]:
    return dict(client("cloudformation", endpoint).describe_stacks(StackName=stack)["Stacks"][0])


def values(pairs: list[dict[str, Any]], key: str, value: str) -> dict[str, str]:
    return {str(p[key]): str(p[value]) for p in pairs}


def test_ecs_workers_are_deployed_from_the_job_stacks_outputs(env: Env, aws_endpoint: str) -> None:
    stack = unique_prefix()
    result = invoke(env, "infra", "deploy", "--stack", stack, *ECS, "-w", "MaxTasks=25")
    assert result.exit_code == 0, result.output
    assert re.search(rf"^Stack {stack} created", result.stdout, re.M)
    assert re.search(rf"^Stack {stack}-ecs-worker created", result.stdout, re.M)
    assert f"Outputs of stack {stack}-ecs-worker" in result.stdout

    job = described(aws_endpoint, stack)
    outputs = values(job["Outputs"], "OutputKey", "OutputValue")
    worker = described(aws_endpoint, f"{stack}-ecs-worker")
    passed = values(worker["Parameters"], "ParameterKey", "ParameterValue")
    for name in ("TableName", "QueueUrls", "DeadLetterQueueUrls", "WorkerPolicyArn"):
        assert passed[name] == outputs[name], name
    assert passed["PriorityLaneUrls"] == outputs["PriorityLaneUrls"]  # a lane by default
    assert passed["KeyUsePolicyArn"] == ""  # no KMS key: the job stack has no such output
    assert (passed["Image"], passed["MaxTasks"]) == (IMAGE, "25")
    service = values(worker["Outputs"], "OutputKey", "OutputValue")
    ecs = client("ecs", aws_endpoint)
    [found] = ecs.describe_services(
        cluster=service["ClusterName"], services=[service["ServiceName"]]
    )["services"]
    definition = ecs.describe_task_definition(taskDefinition=found["taskDefinition"])
    [container] = definition["taskDefinition"]["containerDefinitions"]
    assert container["image"] == IMAGE
    assert "shop.jobs:registry" in container["command"]


def test_a_lambda_worker_sets_the_queues_visibility_to_six_function_timeouts(
    env: Env, aws_endpoint: str
) -> None:
    s3 = client("s3", aws_endpoint)
    bucket = f"code-{unique_prefix()}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="shop/worker.zip", Body=b"PK\x05\x06" + bytes(18))
    stack = unique_prefix()
    result = invoke(
        env,
        "infra",
        "deploy",
        "--stack",
        stack,
        "--lambda-worker",
        *("-w", f"CodeS3Bucket={bucket}", "-w", "CodeS3Key=shop/worker.zip"),
        *("-w", "Timeout=90", "-w", "MaximumConcurrency=5"),
    )
    assert result.exit_code == 0, result.output
    job = values(described(aws_endpoint, stack)["Parameters"], "ParameterKey", "ParameterValue")
    assert (job["VisibilityTimeout"], job["PriorityLaneFrom"], job["WorkerFunctionArn"]) == (
        "540",
        "",
        "",
    )
    outputs = values(described(aws_endpoint, stack)["Outputs"], "OutputKey", "OutputValue")
    url = outputs["QueueUrls"].partition("=")[2]
    sqs = client("sqs", aws_endpoint)
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
    assert attributes["Attributes"]["VisibilityTimeout"] == "540"
    worker = values(
        described(aws_endpoint, f"{stack}-lambda-worker")["Outputs"], "OutputKey", "OutputValue"
    )
    function = client("lambda", aws_endpoint).get_function(
        FunctionName=worker["WorkerFunctionName"]
    )
    assert function["Configuration"]["Timeout"] == 90


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (("-w", "Image=x"), "add --ecs-worker or --lambda-worker"),
        (("--ecs-worker", "--lambda-worker"), "Choose one of --ecs-worker and --lambda-worker"),
        (("--ecs-worker", "-w", "Image=x", "-w", "Registry=a:b"), "needs Subnets, SecurityGroups"),
        ((*ECS, "-w", "Imgae=x"), "Unknown worker parameter 'Imgae'"),
        ((*ECS, "-w", "TableName=other"), "comes from stack"),
        (("--lambda-worker",), "CodeS3Bucket and CodeS3Key"),
        (
            ("--lambda-worker", "-w", "ImageUri=x", "-p", "WorkerFunctionArn=arn:aws:lambda:f"),
            "WorkerFunctionArn stays empty",
        ),
        (
            (
                "--lambda-worker",
                "-w",
                "ImageUri=x",
                "-w",
                "Timeout=60",
                "-p",
                "VisibilityTimeout=59",
            ),
            "shorter than the function's Timeout 60",
        ),
        (("--template", "sqsjobs-ecs-worker", *ECS), "goes beside a job stack"),
    ],
    ids=[
        "-w alone",
        "both kinds",
        "a required one missing",
        "a typo",
        "one the job stack fills",
        "no code",
        "a mapping in the job stack too",
        "a visibility shorter than the timeout",
        "beside a worker stack",
    ],
)
def test_a_worker_asked_for_wrongly_is_refused_before_anything_is_sent(
    env: Env, aws_endpoint: str, arguments: tuple[str, ...], said: str
) -> None:
    stack = unique_prefix()
    result = invoke(env, "infra", "deploy", "--stack", stack, *arguments)
    assert result.exit_code == 2, result.output
    assert said in result.stderr
    cloudformation = client("cloudformation", aws_endpoint)
    with pytest.raises(cloudformation.exceptions.ClientError, match="does not exist"):
        cloudformation.describe_stacks(StackName=stack)


def test_a_dry_run_plans_the_worker_stack_once_the_job_stack_exists(env: Env) -> None:
    stack = unique_prefix()
    first = invoke(env, "infra", "deploy", "--stack", stack, "--dry-run", *ECS)
    assert first.exit_code == 0, first.output
    assert f"Dry run: a deploy would create stack {stack} from template sqsjobs" in first.stdout
    assert f"Stack {stack}-ecs-worker (template sqsjobs-ecs-worker) is planned once" in first.stdout

    assert invoke(env, "infra", "deploy", "--stack", stack).exit_code == 0
    second = invoke(env, "infra", "deploy", "--stack", stack, "--dry-run", *ECS)
    assert second.exit_code == 0, second.output
    worker_part = second.stdout.split(f"create stack {stack}-ecs-worker")[1]
    assert re.search(r"│ Image +│ " + re.escape(IMAGE), worker_part)
    assert re.search(r"│ Add +│ Service +│ AWS::ECS::Service", worker_part)


def test_the_worker_templates_say_what_a_deploy_must_be_given() -> None:
    assert parameters_without_default("sqsjobs") == ()
    needed = set(parameters_without_default("sqsjobs-ecs-worker"))
    assert {"Image", "Registry", "Subnets", "SecurityGroups"} <= needed
    worker = worker_stack("ecs", "shop", "sqsjobs", {"Image": "i", "Registry": "a:b"} | SUBNETS)
    assert needed - set(worker.given) <= set(worker.inherited())  # the rest: the job stack's


SUBNETS = {"Subnets": "subnet-1", "SecurityGroups": "sg-1"}


def test_an_ecs_worker_leaves_the_job_stacks_parameters_as_given() -> None:
    worker = worker_stack("ecs", "shop", "sqsjobs", {"Image": "i", "Registry": "a:b"} | SUBNETS)
    assert job_parameters_for(worker, {"QueueName": "mails"}) == {"QueueName": "mails"}
    assert worker.stack == "shop-ecs-worker"
    with pytest.raises(WorkerSetupError, match="whole number"):
        lambda_worker = worker_stack(
            "lambda", "shop", "sqsjobs", {"ImageUri": "x", "Timeout": "1m"}
        )
        job_parameters_for(lambda_worker, {})
