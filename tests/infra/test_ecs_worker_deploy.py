"""The ECS worker template deployed into the emulator's CloudFormation, beside a job stack.

A stack of ``sqsjobs.yaml`` is deployed first and its outputs are passed, as they are, to
a stack of ``sqsjobs-ecs-worker.yaml`` in a VPC of the emulator's EC2. Measured on the
emulator (moto 5.2):

- Created, and checked here: the ECS cluster, the task definition, the service, both
  IAM roles and the log group (``describe_stack_resources`` lists them).
- Not created: ``AWS::ApplicationAutoScaling::ScalableTarget``, both
  ``AWS::ApplicationAutoScaling::ScalingPolicy`` and the ``AWS::CloudWatch::Alarm``. The
  emulator warns that it cannot parse them and lists each among the stack's resources
  with no logical id; Application Auto Scaling and CloudWatch then know of none. They are
  checked on the template (``test_ecs_worker``) and their arithmetic evaluated
  (``test_backlog_scaling``).
- Ignored on what it creates: the cluster's ``ClusterSettings`` (Container Insights
  reads ``disabled``); the task definition's ``Cpu``, ``NetworkMode``,
  ``RequiresCompatibilities``, ``RuntimePlatform``, ``TaskRoleArn`` and
  ``ExecutionRoleArn`` (it keeps the family, ``Memory``, the volumes and the container
  definition whole); the service's ``LaunchType`` (it reports ``EC2``),
  ``NetworkConfiguration``, ``PlatformVersion``, ``DeploymentConfiguration`` and
  ``PropagateTags``, and it starts an omitted ``DesiredCount`` at 0 where AWS uses 1; the
  task role's ``ManagedPolicyArns`` (nothing attached). A role's inline policy is kept
  as Python's ``repr`` of the document rather than JSON.
- A ``Fn::FindInMap`` keyed by a ``Number`` parameter fails the whole stack (HTTP 500):
  the emulator resolves the parameter to an int and the mapping's keys are strings,
  hence ``Grace`` is a ``String`` parameter.

The emulator enforces no IAM: the task role's policy (the job stack's worker policy,
read back from the emulator) and the execution role's inline policy are evaluated with
``tests/infra/iam.py``. Finally the task definition's own command and environment run a
real worker process against the emulator, which must stop within its ``stopTimeout``.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner

from sqsjobs import JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.cli import main
from sqsjobs.infra import deploy_stack

from .calls import Deployed
from .iam import Request, allowed, decide
from .support import load_template

pytestmark = [
    pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch.+Alarm:UserWarning"),
    pytest.mark.filterwarnings("ignore:Tried to parse AWS.+ApplicationAutoScaling:UserWarning"),
]

TEMPLATE = "sqsjobs-ecs-worker"
ECS = load_template(TEMPLATE)
ROOT = Path(__file__).resolve().parents[2]
SQSJOBS = Path(sys.executable).parent / "sqsjobs"
REGISTRY = "tests.cli.handlers:registry"  # ``sleep`` sleeps as long as its payload says
GRACE = "5"
EMULATED = {
    "Cluster": "AWS::ECS::Cluster",
    "LogGroup": "AWS::Logs::LogGroup",
    "ExecutionRole": "AWS::IAM::Role",
    "TaskRole": "AWS::IAM::Role",
    "TaskDefinition": "AWS::ECS::TaskDefinition",
    "Service": "AWS::ECS::Service",
}
NOT_EMULATED = 4  # the scalable target, two scaling policies, the alarm
# The job stack's outputs the worker stack takes under the same names.
FROM_JOB_STACK = (
    "TableName",
    "QueueUrls",
    "DeadLetterQueueUrls",
    "PriorityLaneUrls",
    "IndexShards",
    "RecordFormat",
    "WorkerPolicyArn",
)


def client(service: str, endpoint: str) -> Any:
    return boto3.session.Session().client(service, endpoint_url=endpoint)


@dataclass(frozen=True)
class Network:
    subnet: str
    security_group: str


@dataclass(frozen=True)
class WorkerStack:
    name: str
    outputs: dict[str, str]
    endpoint: str

    def physical_id(self, logical_id: str) -> str:
        cloudformation = client("cloudformation", self.endpoint)
        reply = cloudformation.describe_stack_resource(
            StackName=self.name, LogicalResourceId=logical_id
        )
        return str(reply["StackResourceDetail"]["PhysicalResourceId"])

    def task_definition(self) -> dict[str, Any]:
        ecs = client("ecs", self.endpoint)
        found = ecs.describe_task_definition(taskDefinition=self.physical_id("TaskDefinition"))
        return dict(found["taskDefinition"])

    def container(self) -> dict[str, Any]:
        (only,) = self.task_definition()["containerDefinitions"]
        return dict(only)

    def role(self, logical_id: str) -> str:
        return self.physical_id(logical_id)


@pytest.fixture(scope="module")
def job_stack(aws_endpoint: str) -> Deployed:
    name = f"t{uuid.uuid4().hex[:12]}"
    outputs = deploy_stack(name, endpoint_url=aws_endpoint)
    (described,) = client("cloudformation", aws_endpoint).describe_stacks(StackName=name)["Stacks"]
    return Deployed(name, dict(outputs), described["StackId"], aws_endpoint)


@pytest.fixture(scope="module")
def network(aws_endpoint: str) -> Network:
    ec2 = client("ec2", aws_endpoint)
    vpc = ec2.create_vpc(CidrBlock="10.42.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.42.1.0/24")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(
        GroupName=f"workers-{uuid.uuid4().hex[:8]}", Description="sqsjobs workers", VpcId=vpc
    )["GroupId"]
    return Network(subnet, group)


def deploy_worker(
    job_stack: Deployed, network: Network, name: str, **parameters: str
) -> WorkerStack:
    given = {key: job_stack.outputs[key] for key in FROM_JOB_STACK}
    given |= {
        "Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:1.4.2",
        "Registry": REGISTRY,
        "Subnets": network.subnet,
        "SecurityGroups": network.security_group,
        **parameters,
    }
    outputs = deploy_stack(
        name, template=TEMPLATE, endpoint_url=job_stack.endpoint, parameters=given
    )
    return WorkerStack(name, dict(outputs), job_stack.endpoint)


@pytest.fixture(scope="module")
def worker_stack(job_stack: Deployed, network: Network) -> WorkerStack:
    name = f"{job_stack.name}-ecs"
    return deploy_worker(
        job_stack, network, name, Grace=GRACE, Concurrency="2", LogRetentionDays="14"
    )


# -- what the emulator creates -------------------------------------------------------------


def test_the_stack_deploys_beside_the_job_stack_with_its_outputs(
    worker_stack: WorkerStack,
) -> None:
    assert set(worker_stack.outputs) == set(ECS["Outputs"])
    cloudformation = client("cloudformation", worker_stack.endpoint)
    listed = cloudformation.describe_stack_resources(StackName=worker_stack.name)
    made = {
        r["LogicalResourceId"]: r["ResourceType"]
        for r in listed["StackResources"]
        if r.get("LogicalResourceId")
    }
    assert made == EMULATED
    unnamed = [r for r in listed["StackResources"] if not r.get("LogicalResourceId")]
    assert len(unnamed) == NOT_EMULATED
    scaling = client("application-autoscaling", worker_stack.endpoint)
    assert scaling.describe_scalable_targets(ServiceNamespace="ecs")["ScalableTargets"] == []


def test_the_task_runs_sqsjobs_worker_with_the_stop_timeout_of_its_grace(
    worker_stack: WorkerStack,
) -> None:
    task = worker_stack.task_definition()
    assert task["family"] == f"{worker_stack.name}-worker"
    box = worker_stack.container()
    assert box["command"] == [
        "sqsjobs",
        "worker",
        REGISTRY,
        "--concurrency",
        "2",
        "--grace",
        GRACE,
        "--wait-time",
        "5",
    ]
    assert box["stopTimeout"] == int(GRACE) + 10 == 15
    assert box["readonlyRootFilesystem"] is True
    assert box["mountPoints"] == [
        {"sourceVolume": "tmp", "containerPath": "/tmp", "readOnly": False}
    ]
    assert task["volumes"] == [{"name": "tmp"}]
    assert box["linuxParameters"] == {"initProcessEnabled": True}
    assert box.get("portMappings", []) == []
    assert box["image"] == "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:1.4.2"


def test_the_task_finds_its_store_in_its_environment(
    worker_stack: WorkerStack, job_stack: Deployed
) -> None:
    environment = {e["name"]: e["value"] for e in worker_stack.container()["environment"]}
    outputs = job_stack.outputs
    assert environment == {
        "SQSJOBS_TABLE": outputs["TableName"],
        "SQSJOBS_QUEUES": outputs["QueueUrls"],
        "SQSJOBS_DEAD_LETTER_QUEUES": outputs["DeadLetterQueueUrls"],
        "SQSJOBS_PRIORITY_LANES": outputs["PriorityLaneUrls"],
        "SQSJOBS_INDEX_SHARDS": outputs["IndexShards"],
        "SQSJOBS_RECORD_FORMAT": outputs["RecordFormat"],
        "SQSJOBS_LOG_FORMAT": "json",
        "SQSJOBS_METRICS": "off",
        "SQSJOBS_METRICS_NAMESPACE": "sqsjobs",
        "AWS_REGION": "us-east-1",
    }


def test_the_logs_go_to_the_stack_s_log_group_with_its_retention(
    worker_stack: WorkerStack,
) -> None:
    group = worker_stack.outputs["LogGroupName"]
    logging = worker_stack.container()["logConfiguration"]
    assert logging["logDriver"] == "awslogs"
    assert logging["options"]["awslogs-group"] == group
    assert logging["options"]["awslogs-region"] == "us-east-1"
    logs = client("logs", worker_stack.endpoint)
    (found,) = logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"]
    assert found["retentionInDays"] == 14


def test_the_service_runs_the_task_definition_in_the_cluster_with_no_load_balancer(
    worker_stack: WorkerStack,
) -> None:
    ecs = client("ecs", worker_stack.endpoint)
    cluster = worker_stack.outputs["ClusterName"]
    assert cluster == worker_stack.physical_id("Cluster")
    (service,) = ecs.describe_services(
        cluster=cluster, services=[worker_stack.outputs["ServiceName"]]
    )["services"]
    assert service["taskDefinition"] == worker_stack.physical_id("TaskDefinition")
    assert service["clusterArn"].endswith(f":cluster/{cluster}")
    assert service["loadBalancers"] == []
    assert service["desiredCount"] == 0  # the emulator's start for an omitted DesiredCount


def test_an_existing_cluster_is_used_and_none_is_made(
    job_stack: Deployed, network: Network, stack_name: str
) -> None:
    ecs = client("ecs", job_stack.endpoint)
    existing = ecs.create_cluster(
        clusterName=f"{stack_name}-shared",
        settings=[{"name": "containerInsights", "value": "enabled"}],
    )["cluster"]
    deployed = deploy_worker(job_stack, network, stack_name, ClusterName=existing["clusterName"])
    assert deployed.outputs["ClusterName"] == existing["clusterName"]
    cloudformation = client("cloudformation", job_stack.endpoint)
    listed = cloudformation.describe_stack_resources(StackName=stack_name)["StackResources"]
    assert "Cluster" not in {r.get("LogicalResourceId") for r in listed}
    services = ecs.list_services(cluster=existing["clusterName"])["serviceArns"]
    assert [arn.rsplit("/", 1)[1] for arn in services] == [deployed.outputs["ServiceName"]]


def test_sqsjobs_infra_deploy_deploys_it_with_the_job_stack_s_outputs(
    job_stack: Deployed, network: Network, stack_name: str
) -> None:
    """The how-to's command (docs/how-to/workers-ecs.md): every -p, values with '=' included."""
    given = [f"{key}={job_stack.outputs[key]}" for key in FROM_JOB_STACK]
    given += [
        "Image=public.ecr.aws/docker/library/python:3.12-slim",
        f"Registry={REGISTRY}",
        f"Subnets={network.subnet}",
        f"SecurityGroups={network.security_group}",
        "MaxTasks=4",
    ]
    args = ["infra", "deploy", "--stack", stack_name, "--template", TEMPLATE]
    for value in given:
        args += ["-p", value]
    result = CliRunner().invoke(main, args, env={"AWS_ENDPOINT_URL": job_stack.endpoint})
    assert result.exit_code == 0, result.output
    assert f"Stack {stack_name} created" in result.output
    for output in ECS["Outputs"]:
        assert output in result.output


# -- IAM: the task role and the execution role --------------------------------------------


def inline_policies(endpoint: str, role: str) -> list[dict[str, Any]]:
    iam = client("iam", endpoint)
    found = []
    for name in iam.list_role_policies(RoleName=role)["PolicyNames"]:
        document = iam.get_role_policy(RoleName=role, PolicyName=name)["PolicyDocument"]
        if isinstance(document, str):  # the emulator keeps a repr, AWS JSON
            try:
                document = json.loads(document)
            except ValueError:
                document = ast.literal_eval(document)
        found.append(dict(document))
    return found


def job_grants(job_stack: Deployed) -> dict[str, set[tuple[str, str]]]:
    """Each job policy's (action, resource) pairs, as deployed."""
    return {
        role: {(g.action, g.resource) for g in job_stack.granted(role)}
        for role in ("Producer", "Worker", "Reader", "Operator")
    }


def any_item(action: str, resource: str) -> Request:
    """A request for ``action`` whose context meets every condition the job policies set
    (a job record's key, its key attribute only, nothing returned)."""
    context: dict[str, tuple[str, ...] | None] = {}
    if action.startswith("dynamodb:"):
        context = {
            "dynamodb:leadingkeys": ("job#0123456789abcdef0123456789abcdef",),
            "dynamodb:attributes": ("pk",),
            "dynamodb:returnvalues": ("NONE",),
        }
    return Request(action, resource, context)


def test_the_task_role_has_the_worker_policy_only(
    worker_stack: WorkerStack, job_stack: Deployed
) -> None:
    iam = client("iam", worker_stack.endpoint)
    role = worker_stack.role("TaskRole")
    assert worker_stack.outputs["TaskRoleArn"].endswith(f":role/{role}")
    assert inline_policies(worker_stack.endpoint, role) == []
    # The emulator attaches no ManagedPolicyArns; the template gives [WorkerPolicyArn]
    # (test_ecs_worker), whose deployed document is evaluated below.
    assert iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"] == []
    (trust,) = iam.get_role(RoleName=role)["Role"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "ecs-tasks.amazonaws.com"}
    assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": "123456789012"}


def test_the_task_role_cannot_do_what_only_producers_and_operators_may(
    job_stack: Deployed,
) -> None:
    task_role = job_stack.statements("Worker")
    grants = job_grants(job_stack)
    others = (grants["Producer"] | grants["Operator"] | grants["Reader"]) - grants["Worker"]
    queue, dead = job_stack.outputs["QueueArn"], job_stack.outputs["DeadLetterQueueArn"]
    assert {
        ("sqs:DeleteMessage", dead),  # operators empty the dead-letter queue
        ("sqs:GetQueueAttributes", dead),  # operators and readers count it
    } <= others
    for action, resource in sorted(others):
        assert decide(task_role, any_item(action, resource)) == "implicitly denied"
    table = f"arn:aws:dynamodb:us-east-1:123456789012:table/{job_stack.table}"
    never = [
        ("dynamodb:DeleteItem", table),
        ("dynamodb:BatchWriteItem", table),
        ("dynamodb:Scan", table),
        ("dynamodb:DeleteTable", table),
        ("dynamodb:UpdateTable", table),
        ("sqs:PurgeQueue", queue),
        ("sqs:DeleteQueue", queue),
        ("sqs:SetQueueAttributes", queue),
        ("iam:PassRole", "arn:aws:iam::123456789012:role/anything"),
        ("ecs:UpdateService", "*"),
        ("cloudformation:DescribeStacks", "arn:aws:cloudformation:us-east-1:123456789012:*"),
    ]
    for action, resource in never:
        assert not allowed(task_role, any_item(action, resource)), action
    # What the worker does, it may: the role is not empty.
    assert allowed(task_role, Request("sqs:ReceiveMessage", queue, {}))


def test_the_execution_role_cannot_touch_the_jobs(
    worker_stack: WorkerStack, job_stack: Deployed
) -> None:
    iam = client("iam", worker_stack.endpoint)
    role = worker_stack.role("ExecutionRole")
    assert iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"] == []
    (policy,) = inline_policies(worker_stack.endpoint, role)
    statements = policy["Statement"]
    every_job_grant = set().union(*job_grants(job_stack).values())
    assert len(every_job_grant) > 20
    for action, resource in sorted(every_job_grant):
        assert decide(statements, any_item(action, resource)) == "implicitly denied", action

    group = worker_stack.outputs["LogGroupName"]
    logs = "arn:aws:logs:us-east-1:123456789012:log-group"
    stream = f"{logs}:{group}:log-stream:worker/worker/0123456789abcdef"
    repository = "arn:aws:ecr:us-east-1:123456789012:repository/app"

    def may(action: str, arn: str) -> bool:
        return allowed(statements, Request(action, arn, {}))

    assert may("ecr:GetAuthorizationToken", "*")
    assert may("ecr:BatchGetImage", repository)
    assert may("ecr:GetDownloadUrlForLayer", repository)
    assert may("logs:CreateLogStream", stream)
    assert may("logs:PutLogEvents", stream)
    assert not may("logs:PutLogEvents", f"{logs}:another-group:log-stream:x")
    assert not may("logs:CreateLogGroup", f"{logs}:{group}")
    assert not may("ecr:PutImage", repository)
    assert not may("ssm:GetParameters", "arn:aws:ssm:us-east-1:123456789012:parameter/x")


# -- the task's command and environment, run as a process ---------------------------------


class WorkerProcess:
    """The task definition's command with its environment, as the container would run
    it (``sqsjobs`` from this environment, the repository as working directory)."""

    def __init__(self, command: list[str], environment: dict[str, str], home: Path) -> None:
        assert command[0] == "sqsjobs"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "PYTHONUNBUFFERED": "1",
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            **environment,
        }
        self.process = subprocess.Popen(
            [str(SQSJOBS), *command[1:]],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    def events(self, event: str) -> list[dict[str, Any]]:
        records = [json.loads(line) for line in list(self.lines) if line.startswith("{")]
        return [r for r in records if r.get("event") == event]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self._reader.join(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture
def job_store(job_stack: Deployed) -> Iterator[SqsJobStore]:
    store = SqsJobStore.from_stack(job_stack.name, endpoint_url=job_stack.endpoint)
    try:
        yield store
    finally:
        store.close()


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)


def status(queue: SyncJobQueue, job_id: str) -> JobStatus | None:
    job = queue.get(job_id)
    return None if job is None else job.status


@pytest.mark.slow
def test_the_task_s_worker_runs_jobs_and_stops_within_its_stop_timeout(
    worker_stack: WorkerStack, job_store: SqsJobStore, tmp_path: Path
) -> None:
    """SIGTERM, as ECS sends it on scale-in: the running job is released back to its
    queue, attempt not counted, and the process exits before stopTimeout's SIGKILL."""
    box = worker_stack.container()
    environment = {e["name"]: e["value"] for e in box["environment"]}
    environment["AWS_ENDPOINT_URL"] = worker_stack.endpoint  # the emulator instead of AWS
    queue = SyncJobQueue(job_store)
    urgent = queue.enqueue("sleep", {"seconds": 0.1}, priority=5).job.id  # lane and queue
    worker = WorkerProcess(box["command"], environment, tmp_path)
    try:
        wait_for(lambda: status(queue, urgent) is JobStatus.COMPLETED, "the urgent job")
        long = queue.enqueue("sleep", {"seconds": 300}).job.id
        wait_for(lambda: status(queue, long) is JobStatus.RUNNING, "the long job to start")
        signalled = time.monotonic()
        worker.process.send_signal(signal.SIGTERM)
        try:
            code = worker.process.wait(timeout=box["stopTimeout"])
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {box['stopTimeout']}s after SIGTERM: {worker.lines}")
        stopped = time.monotonic() - signalled
    finally:
        worker.close()
    assert code == 0, worker.lines
    assert float(GRACE) <= stopped < box["stopTimeout"]
    released = queue.get(long)
    assert released is not None
    assert (released.status, released.attempts) == (JobStatus.QUEUED, 0)
    [drained] = worker.events("jobs.worker.drained")
    assert (drained["finished"], drained["released"]) == ([], [long])
