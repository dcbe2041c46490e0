"""``sqsjobs infra template|deploy``: the shipped YAML, and a deploy that reports and waits.

The deploy reaches the emulator through ``AWS_ENDPOINT_URL`` alone, as it would reach
any endpoint through boto3's chain, and the stack it makes is one ``--stack`` can use.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest

from sqsjobs.cli import _infra
from sqsjobs.infra import (
    TEMPLATES,
    DeployOutcome,
    StackEvent,
    StackOutputs,
    template_parameters,
    template_text,
)
from sqsjobs.infra._deploy import Deployment
from tests.aws.emulator import unique_prefix
from tests.upgrade.previous import previous_file

from .conftest import PLAIN, Env, invoke
from .process import EMULATOR_AWS, clean_env, closed_port, run

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch.+Alarm:UserWarning")


@pytest.fixture
def env(aws_endpoint: str) -> Env:
    return {**PLAIN, "AWS_ENDPOINT_URL": aws_endpoint, "SQSJOBS_STACK": None}


@pytest.mark.parametrize("name", TEMPLATES)
def test_template_prints_the_shipped_yaml_unchanged(name: str) -> None:
    result = invoke({}, "infra", "template", "--name", name)
    assert result.exit_code == 0
    assert result.stdout == template_text(name)


def test_template_is_sqsjobs_by_default_and_refuses_unknown_names() -> None:
    assert invoke({}, "infra", "template").stdout == template_text("sqsjobs")
    result = invoke({}, "infra", "template", "--name", "everything")
    assert result.exit_code == 2
    assert "Invalid value for '--name'" in result.stderr


def test_deploy_shows_progress_and_outputs_and_the_stack_serves_commands(env: Env) -> None:
    stack = unique_prefix()
    result = invoke(env, "infra", "deploy", "--stack", stack, "-p", "QueueName=emails")
    assert result.exit_code == 0, result.output
    assert re.search(
        rf"^\d\d:\d\d:\d\d {stack} +AWS::CloudFormation::Stack CREATE_COMPLETE", result.stdout, re.M
    )
    assert re.search(rf"^Stack {stack} created \(\d+\.\d+s\)$", result.stdout, re.M)
    outputs = dict(re.findall(r"^│ (\w+) +│ (\S+) +│$", result.stdout, re.M))
    assert outputs["QueueUrls"].startswith("emails=")
    assert {"TableName", "DeadLetterQueueUrls"} <= set(outputs)

    listed = invoke(env, "jobs", "list", "--stack", stack)
    assert listed.exit_code == 0, listed.output
    assert "Jobs in every queue" in listed.stdout

    again = invoke(env, "infra", "deploy", "--stack", stack)  # parameters not given are kept
    assert again.exit_code == 0, again.output
    assert dict(re.findall(r"^│ (\w+) +│ (\S+) +│$", again.stdout, re.M)) == outputs
    # The emulator updates a stack even when nothing changed, where CloudFormation says
    # there is nothing to update (the unchanged line is tested on a fake, below).
    assert re.search(rf"^Stack {stack} updated \(\d+\.\d+s\)$", again.stdout, re.M)


def test_a_stack_left_without_outputs_fails_the_deploy_naming_them(
    env: Env, aws_endpoint: str
) -> None:
    """The emulator cannot update the table or the managed policies in place: updating a
    stack 0.1's template made drops them from the stack, as UPDATE_COMPLETE."""
    stack = unique_prefix()
    cloudformation = boto3.client("cloudformation", endpoint_url=aws_endpoint)
    try:
        Deployment(cloudformation, stack).run(previous_file("src/sqsjobs/infra/sqsjobs.yaml"), {})
    finally:
        cloudformation.close()
    result = invoke(env, "infra", "deploy", "--stack", stack)
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(
        f"error: Stack '{stack}' is UPDATE_COMPLETE but lacks output(s) TableName, "
        "ProducerPolicyArn, WorkerPolicyArn, ReaderPolicyArn, OperatorPolicyArn of its "
        "template, which stores and --stack read. "
    )
    assert "deploy a new stack there" in line
    assert line.endswith("in the CloudFormation console, then deploy again")  # whole
    # Deploying again cannot bring them back, and says so the same way.
    again = invoke(env, "infra", "deploy", "--stack", stack)
    assert again.exit_code == 1 and "lacks output(s) TableName" in again.stderr


def test_a_refused_deploy_is_one_line_and_exit_1(env: Env) -> None:
    result = invoke(
        env, "infra", "deploy", "--stack", unique_prefix(), "--template", "sqsjobs-queue"
    )
    assert result.exit_code == 1
    assert result.stderr.startswith("error: CloudFormation refused to create stack ")
    assert result.stderr.rstrip().endswith("Missing parameter TableName")


def test_a_malformed_parameter_is_bad_usage(env: Env) -> None:
    result = invoke(env, "infra", "deploy", "--stack", "s", "-p", "QueueName")
    assert result.exit_code == 2
    assert "expected KEY=VALUE, got 'QueueName'" in result.stderr


def test_deploy_needs_a_stack_name() -> None:
    result = invoke({}, "infra", "deploy")
    assert result.exit_code == 2
    assert "Missing option '--stack'" in result.stderr


def test_deploy_prints_names_reasons_and_outputs_literally(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stack name, a CloudFormation reason and an output are printed as they are."""
    name = "[/x][link=https://example.invalid]app[/link]"
    reason = "Resource handler returned message: [/Queue] :thumbs_up:\x1b[2J"

    def deploy_stack(stack: str, *, on_event: Callable[[StackEvent], None], **kw: Any) -> Any:
        assert stack == name
        at = datetime.fromtimestamp(1796094741.2439704, UTC)
        on_event(StackEvent("e1", at, "JobQueue", "AWS::SQS::Queue", "CREATE_FAILED", reason))
        outputs = {"QueueUrl": "https://sqs.invalid/[bold]q[/bold]"}
        return StackOutputs(outputs, DeployOutcome.UPDATED, "UPDATE_COMPLETE")

    monkeypatch.setattr(_infra, "deploy_stack", deploy_stack)
    result = invoke(PLAIN, "infra", "deploy", "--stack", name)
    assert result.exit_code == 0, result.output
    assert f"Stack {name} updated (" in result.stdout
    assert "Resource handler returned message: [/Queue] :thumbs_up:\\x1b[2J" in result.stdout
    assert "Outputs of stack" in result.stdout
    assert result.stdout.count(name) == 2  # the title wraps at the table's width
    assert "https://sqs.invalid/[bold]q[/bold]" in result.stdout
    assert "\x1b" not in result.stdout


@pytest.mark.parametrize(
    ("outcome", "line"),
    [
        (DeployOutcome.CREATED, re.compile(r"^Stack app created \(\d+\.\ds\)$", re.M)),
        (DeployOutcome.UPDATED, re.compile(r"^Stack app updated \(\d+\.\ds\)$", re.M)),
        (DeployOutcome.UNCHANGED, re.compile(r"^Stack app unchanged \(no changes\)$", re.M)),
    ],
)
def test_a_piped_deploy_says_in_one_line_what_it_did(
    monkeypatch: pytest.MonkeyPatch, outcome: DeployOutcome, line: re.Pattern[str]
) -> None:
    """Off a terminal (a CI log) no spinner shows: that line is what says it."""

    def deploy_stack(stack: str, **kw: Any) -> StackOutputs:
        return StackOutputs({"TableName": "app-jobs"}, outcome, "UPDATE_COMPLETE")

    monkeypatch.setattr(_infra, "deploy_stack", deploy_stack)
    result = invoke(PLAIN, "infra", "deploy", "--stack", "app")
    assert result.exit_code == 0, result.output
    assert line.search(result.stdout), result.stdout
    assert "Outputs of stack app" in result.stdout


def test_deploy_tags_the_stack(env: Env, aws_endpoint: str) -> None:
    stack = unique_prefix()
    result = invoke(
        env, "infra", "deploy", "--stack", stack, "--tag", "team=payments", "--tag", "env=prod"
    )
    assert result.exit_code == 0, result.output
    client = boto3.client("cloudformation", endpoint_url=aws_endpoint)
    try:
        [described] = client.describe_stacks(StackName=stack)["Stacks"]
    finally:
        client.close()
    assert {t["Key"]: t["Value"] for t in described["Tags"]} == {"team": "payments", "env": "prod"}
    bad = invoke(env, "infra", "deploy", "--stack", stack, "--tag", "no-equals-sign")
    assert bad.exit_code == 2 and "expected KEY=VALUE" in bad.stderr


@pytest.mark.parametrize("name", TEMPLATES)
def test_the_template_parameters_are_the_ones_cloudformation_reads(
    name: str, aws_endpoint: str
) -> None:
    client = boto3.client("cloudformation", endpoint_url=aws_endpoint)
    try:
        summary = client.get_template_summary(TemplateBody=template_text(name))
    finally:
        client.close()
    declared = {p["ParameterKey"] for p in summary["Parameters"]}
    assert set(template_parameters(name)) == declared
    assert len(template_parameters(name)) == len(declared) > 5


def test_an_unknown_parameter_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    """The endpoint is a closed port: a command that sent anything would fail with exit 1."""
    env = clean_env(tmp_path, AWS_ENDPOINT_URL=f"http://127.0.0.1:{closed_port()}", **EMULATOR_AWS)
    args = ["infra", "deploy", "--stack", "jobs-prod", "-p", "QueueName=emails"]
    result = run(env, *args, "-p", "QueueNme=emails", "-p", "Retention=9")
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    last = result.stderr.rstrip().splitlines()[-1]
    assert last.startswith(
        "Error: Unknown parameter 'QueueNme', 'Retention' for template sqsjobs: valid parameters "
        "are DeletionProtectionEnabled, QueueName, MaxReceiveCount, "
    )
    assert last.endswith(", ".join(template_parameters("sqsjobs")))  # every one, in order
    queue = run(env, "infra", "deploy", "--stack", "q", "--template", "sqsjobs-queue", "-p", "X=1")
    assert queue.returncode == 2
    assert "for template sqsjobs-queue: valid parameters are TableName, QueueName," in queue.stderr


def test_a_parameter_without_an_equals_sign_is_refused(tmp_path: Path) -> None:
    env = clean_env(tmp_path, AWS_ENDPOINT_URL=f"http://127.0.0.1:{closed_port()}", **EMULATOR_AWS)
    result = run(env, "infra", "deploy", "--stack", "jobs-prod", "-p", "QueueName")
    assert result.returncode == 2
    assert "Invalid value for '--parameter' / '-p': expected KEY=VALUE, got 'QueueName'" in (
        result.stderr
    )
