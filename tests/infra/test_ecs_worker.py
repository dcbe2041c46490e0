"""What the ECS worker template says, read from the parsed YAML.

The emulator creates the cluster, the task definition, the service, the roles and the
log group, but ignores much of their configuration (``test_ecs_worker_deploy``), and
creates neither the scaling policies nor the alarm: those are checked here, and their
arithmetic in ``test_backlog_scaling``. The command and environment are checked against
the worker's own command line and the store's own variable names.
"""

from __future__ import annotations

from typing import Any

import click
import pytest

from sqsjobs.aws.store import config
from sqsjobs.cli._worker import worker
from sqsjobs.infra import template_parameters
from sqsjobs.infra._deploy import stack_policy
from sqsjobs.infra._templates import declared_outputs, template_text

from .backlog import Stack
from .support import load_template, references, resources

NAME = "sqsjobs-ecs-worker"
ECS = load_template(NAME)
MAIN = load_template("sqsjobs")
QUEUE = load_template("sqsjobs-queue")
STOP_MARGIN = 10  # seconds between the end of the grace and SIGKILL
FARGATE_MAX_STOP_TIMEOUT = 120
# Fargate task sizes (Linux), Amazon ECS Developer Guide, "Task size": CPU units, then
# the memory values (MiB) each takes.
FARGATE_SIZES = {
    "256": [512, 1024, 2048],
    "512": list(range(1024, 4096 + 1, 1024)),
    "1024": list(range(2048, 8192 + 1, 1024)),
    "2048": list(range(4096, 16384 + 1, 1024)),
    "4096": list(range(8192, 30720 + 1, 1024)),
}
# The parameters that take the job stack's outputs of the same name, as they are.
FROM_JOB_STACK = {
    "TableName",
    "QueueUrls",
    "DeadLetterQueueUrls",
    "PriorityLaneUrls",
    "IndexShards",
    "RecordFormat",
    "WorkerPolicyArn",
    "KeyUsePolicyArn",
}
NO_VALUE = {"Ref": "AWS::NoValue"}
# The emulator creates none of these; no output may refer to them (it fails the stack).
NOT_EMULATED = {
    "AWS::ApplicationAutoScaling::ScalableTarget",
    "AWS::ApplicationAutoScaling::ScalingPolicy",
    "AWS::CloudWatch::Alarm",
}


def properties(logical_id: str) -> dict[str, Any]:
    return dict(ECS["Resources"][logical_id]["Properties"])


def parameter(name: str) -> dict[str, Any]:
    return dict(ECS["Parameters"][name])


def container() -> dict[str, Any]:
    (only,) = properties("TaskDefinition")["ContainerDefinitions"]
    return dict(only)


def grace_values() -> list[str]:
    return [str(value) for value in parameter("Grace")["AllowedValues"]]


def timings(grace: str) -> dict[str, Any]:
    return dict(ECS["Mappings"]["GraceTimings"][grace])


def command(stack: Stack) -> list[str]:
    return [str(part) for part in stack.resolve(container()["Command"])]


# -- stopping: grace, stopTimeout, the long poll -------------------------------------------


def test_stop_timeout_is_the_grace_plus_a_margin_within_fargate_s_limit() -> None:
    assert set(ECS["Mappings"]["GraceTimings"]) == set(grace_values())
    for grace in grace_values():
        assert timings(grace)["StopTimeout"] == int(grace) + STOP_MARGIN
    assert max(timings(g)["StopTimeout"] for g in grace_values()) == FARGATE_MAX_STOP_TIMEOUT
    assert container()["StopTimeout"] == {
        "Fn::FindInMap": ["GraceTimings", {"Ref": "Grace"}, "StopTimeout"]
    }
    assert "120" in parameter("Grace")["Description"]
    assert parameter("Grace")["Default"] == "20"  # the worker's own default: stopTimeout 30


def test_the_long_poll_a_stop_waits_out_ends_within_the_grace() -> None:
    """The drain waits for the cancelled long poll beside the jobs: at most the wait time,
    so within the grace, leaving the whole margin for the releases and the exit."""
    wait_time = next(p for p in worker.params if p.name == "wait_time").type
    assert isinstance(wait_time, click.FloatRange)
    for grace in grace_values():
        waited = float(timings(grace)["WaitTime"])
        assert waited == min(float(grace), 20.0)
        assert wait_time.min is not None and wait_time.max is not None
        assert wait_time.min <= waited <= wait_time.max


@pytest.mark.parametrize("grace", ["5", "20", "110"])
def test_the_command_is_sqsjobs_worker_and_the_worker_accepts_it(grace: str) -> None:
    stack = Stack.of(ECS, Registry="tests.cli.handlers:registry", Grace=grace, Concurrency="8")
    args = command(stack)
    assert args[:2] == ["sqsjobs", "worker"]
    assert args[2:] == [
        "tests.cli.handlers:registry",
        "--concurrency",
        "8",
        "--grace",
        grace,
        "--wait-time",
        str(timings(grace)["WaitTime"]),
    ]
    with worker.make_context("worker", args[2:]) as ctx:  # the real command line's parsing
        assert (ctx.params["concurrency"], ctx.params["grace"]) == (8, float(grace))
        assert ctx.params["wait_time"] == float(timings(grace)["WaitTime"])


def test_concurrency_has_the_worker_s_bounds() -> None:
    option = next(p for p in worker.params if p.name == "concurrency").type
    assert isinstance(option, click.IntRange)
    assert (parameter("Concurrency")["MinValue"], parameter("Concurrency")["MaxValue"]) == (
        option.min,
        option.max,
    )


# -- the task: its store, its filesystem, its logs ---------------------------------------


def test_the_environment_names_the_store_as_the_job_stack_s_outputs_do() -> None:
    """Variables the store and the worker read (their own constants): the task needs no
    stack lookup, hence no cloudformation:DescribeStacks."""
    options = {p.name: getattr(p, "envvar", None) for p in worker.params}
    expected = {
        config.TABLE_ENV: {"Ref": "TableName"},
        config.QUEUES_ENV: {"Ref": "QueueUrls"},
        config.DEAD_LETTER_ENV: {"Ref": "DeadLetterQueueUrls"},
        config.SHARDS_ENV: {"Ref": "IndexShards"},
        config.FORMAT_ENV: {"Ref": "RecordFormat"},
        options["log_format"]: "json",
        options["metrics"]: {"Ref": "Metrics"},
        options["metrics_namespace"]: {"Ref": "MetricsNamespace"},
        "AWS_REGION": {"Ref": "AWS::Region"},
    }
    environment = container()["Environment"]
    plain = {e["Name"]: e["Value"] for e in environment if "Name" in e}
    assert plain == expected
    (lane,) = [e for e in environment if "Fn::If" in e]
    assert lane == {
        "Fn::If": [
            "HasPriorityLane",
            {"Name": config.LANES_ENV, "Value": {"Ref": "PriorityLaneUrls"}},
            NO_VALUE,
        ]
    }
    assert options["stack"] not in plain  # SQSJOBS_STACK would make the worker read the stack


def test_the_parameters_from_the_job_stack_are_its_outputs_by_name() -> None:
    for template in (MAIN, QUEUE):
        assert set(template["Outputs"]) >= FROM_JOB_STACK
    assert set(ECS["Parameters"]) >= FROM_JOB_STACK
    # Required, so that a deploy cannot pair the worker with another stack's layout.
    for name in FROM_JOB_STACK - {"PriorityLaneUrls", "KeyUsePolicyArn"}:
        assert "Default" not in parameter(name), name
    assert parameter("PriorityLaneUrls")["Default"] == parameter("KeyUsePolicyArn")["Default"] == ""


def test_the_root_filesystem_is_read_only_with_a_scratch_tmp() -> None:
    assert container()["ReadonlyRootFilesystem"] is True
    assert properties("TaskDefinition")["Volumes"] == [{"Name": "tmp"}]
    assert container()["MountPoints"] == [
        {"SourceVolume": "tmp", "ContainerPath": "/tmp", "ReadOnly": False}
    ]


def test_logs_go_to_the_stack_s_log_group_which_has_a_retention() -> None:
    assert properties("LogGroup") == {"RetentionInDays": {"Ref": "LogRetentionDays"}}
    assert parameter("LogRetentionDays")["Default"] == 30
    options = container()["LogConfiguration"]["Options"]
    assert container()["LogConfiguration"]["LogDriver"] == "awslogs"
    assert options["awslogs-group"] == {"Ref": "LogGroup"}
    assert options["awslogs-region"] == {"Ref": "AWS::Region"}


def test_the_task_is_a_fargate_task_of_a_size_fargate_runs() -> None:
    task = properties("TaskDefinition")
    assert (task["RequiresCompatibilities"], task["NetworkMode"]) == (["FARGATE"], "awsvpc")
    assert (task["Cpu"], task["Memory"]) == ({"Ref": "Cpu"}, {"Ref": "Memory"})
    rules = {
        rule["RuleCondition"]["Fn::Equals"][1]: rule["Assertions"][0]["Assert"]["Fn::Contains"]
        for rule in ECS["Rules"].values()
    }
    assert {cpu: [int(m) for m in allowed] for cpu, (allowed, _) in rules.items()} == FARGATE_SIZES
    assert all(memory == {"Ref": "Memory"} for _, memory in rules.values())
    assert parameter("Cpu")["AllowedValues"] == list(FARGATE_SIZES)
    every = sorted({m for sizes in FARGATE_SIZES.values() for m in sizes})
    assert [int(m) for m in parameter("Memory")["AllowedValues"]] == every
    assert int(parameter("Memory")["Default"]) in FARGATE_SIZES[parameter("Cpu")["Default"]]
    for rule in ECS["Rules"].values():
        assert rule["RuleCondition"]["Fn::Equals"][0] == {"Ref": "Cpu"}


# -- roles ---------------------------------------------------------------------------------


def test_the_task_role_has_exactly_the_worker_policy() -> None:
    role = properties("TaskRole")
    assert set(role) == {"Description", "AssumeRolePolicyDocument", "ManagedPolicyArns"}
    assert role["ManagedPolicyArns"] == [
        {"Ref": "WorkerPolicyArn"},
        {"Fn::If": ["HasKeyUsePolicy", {"Ref": "KeyUsePolicyArn"}, NO_VALUE]},
    ]
    plain = Stack.of(ECS, WorkerPolicyArn="arn:aws:iam::123456789012:policy/w")
    resolved = plain.resolve(role["ManagedPolicyArns"])
    assert [arn for arn in resolved if arn != NO_VALUE] == ["arn:aws:iam::123456789012:policy/w"]
    keyed = Stack.of(ECS, KeyUsePolicyArn="arn:aws:iam::123456789012:policy/k")
    assert keyed.resolve(role["ManagedPolicyArns"])[1] == "arn:aws:iam::123456789012:policy/k"
    task = properties("TaskDefinition")
    assert task["TaskRoleArn"] == {"Fn::GetAtt": ["TaskRole", "Arn"]}
    assert task["ExecutionRoleArn"] == {"Fn::GetAtt": ["ExecutionRole", "Arn"]}


def test_both_roles_are_for_ecs_tasks_only() -> None:
    for logical_id in ("TaskRole", "ExecutionRole"):
        (trust,) = properties(logical_id)["AssumeRolePolicyDocument"]["Statement"]
        assert trust["Principal"] == {"Service": "ecs-tasks.amazonaws.com"}
        assert (trust["Effect"], trust["Action"]) == ("Allow", "sts:AssumeRole")
    (task,) = properties("TaskRole")["AssumeRolePolicyDocument"]["Statement"]
    assert task["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}


def test_the_execution_role_pulls_images_and_writes_its_logs_only() -> None:
    role = properties("ExecutionRole")
    assert "ManagedPolicyArns" not in role
    (policy,) = role["Policies"]
    actions = {
        action
        for statement in policy["PolicyDocument"]["Statement"]
        for action in (
            [statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"]
        )
    }
    assert actions == {
        "ecr:GetAuthorizationToken",
        "ecr:BatchCheckLayerAvailability",
        "ecr:BatchGetImage",
        "ecr:GetDownloadUrlForLayer",
        "logs:CreateLogStream",
        "logs:PutLogEvents",
    }
    assert references(policy) == {"AWS::Partition", "AWS::Region", "AWS::AccountId", "LogGroup"}


# -- the service -----------------------------------------------------------------------------


def test_the_service_is_private_by_default() -> None:
    service = properties("Service")
    assert "LoadBalancers" not in service
    assert "PortMappings" not in container()
    assert "ServiceConnectConfiguration" not in service
    network = service["NetworkConfiguration"]["AwsvpcConfiguration"]
    assert network["AssignPublicIp"] == {"Ref": "AssignPublicIp"}
    assert parameter("AssignPublicIp")["Default"] == "DISABLED"
    assert service["EnableExecuteCommand"] is False


def test_autoscaling_owns_the_task_count() -> None:
    service = properties("Service")
    assert "DesiredCount" not in service  # an update would reset what autoscaling chose
    assert (service["LaunchType"], service["PlatformVersion"]) == ("FARGATE", "LATEST")
    deployment = service["DeploymentConfiguration"]
    assert deployment["DeploymentCircuitBreaker"] == {"Enable": True, "Rollback": True}
    assert (deployment["MinimumHealthyPercent"], deployment["MaximumPercent"]) == (100, 200)
    target = properties("ScalableTarget")
    assert (target["MinCapacity"], target["MaxCapacity"]) == (
        {"Ref": "MinTasks"},
        {"Ref": "MaxTasks"},
    )
    assert (target["ServiceNamespace"], target["ScalableDimension"]) == (
        "ecs",
        "ecs:service:DesiredCount",
    )
    assert parameter("MinTasks")["MinValue"] == parameter("MinTasks")["Default"] == 0


def test_the_scaling_target_is_the_service() -> None:
    arn, names = properties("ScalableTarget")["ResourceId"]["Fn::Sub"]
    assert arn == "service/${ClusterName}/${ServiceName}"
    assert names == {
        "ClusterName": {"Fn::If": ["CreateCluster", {"Ref": "Cluster"}, {"Ref": "ClusterName"}]},
        "ServiceName": {"Fn::GetAtt": ["Service", "Name"]},
    }


def test_target_tracking_scales_in_too_with_a_cooldown() -> None:
    config = properties("BacklogPerTaskPolicy")["TargetTrackingScalingPolicyConfiguration"]
    assert config["DisableScaleIn"] is False
    assert config["ScaleInCooldown"] == {"Ref": "ScaleInCooldown"}
    assert parameter("ScaleInCooldown")["Default"] >= 300
    assert config["TargetValue"] == {"Ref": "TargetBacklogPerTask"}
    assert parameter("TargetBacklogPerTask")["Default"] == 10 * parameter("Concurrency")["Default"]


def test_both_policies_and_the_alarm_act_on_this_service() -> None:
    for policy in ("BacklogPerTaskPolicy", "ScaleFromZeroPolicy"):
        assert properties(policy)["ScalingTargetId"] == {"Ref": "ScalableTarget"}
    assert properties("ScaleFromZeroAlarm")["AlarmActions"] == [{"Ref": "ScaleFromZeroPolicy"}]
    step = properties("ScaleFromZeroPolicy")["StepScalingPolicyConfiguration"]
    assert step["AdjustmentType"] == "ExactCapacity"
    assert step["StepAdjustments"] == [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}]


def test_the_cluster_it_creates_has_container_insights() -> None:
    cluster = ECS["Resources"]["Cluster"]
    assert cluster["Condition"] == "CreateCluster"
    assert cluster["Properties"]["ClusterSettings"] == [
        {"Name": "containerInsights", "Value": "enabled"}
    ]
    assert "Container Insights" in parameter("ClusterName")["Description"]


# -- outputs, parameters, stack policy ---------------------------------------------------


def test_outputs() -> None:
    assert set(ECS["Outputs"]) == {"ClusterName", "ServiceName", "TaskRoleArn", "LogGroupName"}
    assert declared_outputs(template_text(NAME)) == dict.fromkeys(ECS["Outputs"])
    ignored = {k for t in NOT_EMULATED for k in resources(ECS, t)}
    assert ignored == {
        "ScalableTarget",
        "BacklogPerTaskPolicy",
        "ScaleFromZeroPolicy",
        "ScaleFromZeroAlarm",
    }
    for output in ECS["Outputs"].values():
        assert not references(output) & ignored


def test_the_deploy_command_reads_the_parameters_as_cloudformation_does() -> None:
    assert template_parameters(NAME) == tuple(ECS["Parameters"])


def test_no_stack_policy_it_has_no_table() -> None:
    assert resources(ECS, "AWS::DynamoDB::Table") == {}
    assert stack_policy(NAME) is None
