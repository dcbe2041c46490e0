"""``sqsjobs infra deploy --dry-run``: the parameters a deploy would pass and the change
set CloudFormation computes for them, with nothing changed and nothing left behind.

The emulator computes change sets as CloudFormation's API does, but plans every resource
of a new stack (conditions are not applied) and no modification for a changed
parameter; the rules the emulator skips are tested on a scripted client below.
"""

from __future__ import annotations

import re
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sqsjobs.infra import PlannedChange, StackPreview
from sqsjobs.infra._preview import KEPT, MASKED, Preview, shown_parameters
from tests.aws.emulator import unique_prefix

from .conftest import PLAIN, Env, invoke

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch.+Alarm:UserWarning")


@pytest.fixture
def env(aws_endpoint: str) -> Env:
    return {**PLAIN, "AWS_ENDPOINT_URL": aws_endpoint, "SQSJOBS_STACK": None, "COLUMNS": "160"}


def cloudformation(endpoint: str) -> Any:
    return boto3.client("cloudformation", endpoint_url=endpoint, region_name="us-east-1")


def rows(text: str) -> dict[str, str]:
    return dict(re.findall(r"^│ (\w+) +│ ?(.*?) *│$", text, re.M))


def test_a_dry_run_of_a_new_stack_plans_it_and_leaves_no_stack(env: Env, aws_endpoint: str) -> None:
    stack = unique_prefix()
    result = invoke(env, "infra", "deploy", "--stack", stack, "--dry-run", "-p", "QueueName=mails")
    assert result.exit_code == 0, result.output
    assert f"Dry run: a deploy would create stack {stack} from template sqsjobs" in result.stdout
    parameters = rows(result.stdout.split("What CloudFormation would change")[0])
    assert next(iter(parameters)) == "QueueName" and parameters["QueueName"] == "mails"
    assert parameters["RecordFormat"] == "3"  # the template's default for a new stack
    assert re.search(r"│ Add +│ JobTable +│ AWS::DynamoDB::Table +│ - +│", result.stdout)
    assert f"Nothing was changed: stack {stack} is as it was." in result.stdout
    client = cloudformation(aws_endpoint)
    with pytest.raises(client.exceptions.ClientError, match="does not exist"):
        client.describe_stacks(StackName=stack)


def test_a_dry_run_of_an_update_keeps_the_stack_as_it_was(env: Env, aws_endpoint: str) -> None:
    stack = unique_prefix()
    made = invoke(env, "infra", "deploy", "--stack", stack, "-p", "QueueName=mails")
    assert made.exit_code == 0, made.output
    client = cloudformation(aws_endpoint)
    before = client.describe_stacks(StackName=stack)["Stacks"][0]

    result = invoke(
        env, "infra", "deploy", "--stack", stack, "--dry-run", "-p", "OldestMessageAgeThreshold=600"
    )
    assert result.exit_code == 0, result.output
    assert f"Dry run: a deploy would update stack {stack} from template sqsjobs" in result.stdout
    parameters = rows(result.stdout)
    assert parameters["OldestMessageAgeThreshold"] == "600"
    assert parameters["QueueName"] == "mails"  # kept from the stack, not the default
    after = client.describe_stacks(StackName=stack)["Stacks"][0]
    assert after["Parameters"] == before["Parameters"]
    assert after["StackStatus"] == before["StackStatus"]
    assert client.list_change_sets(StackName=stack)["Summaries"] == []


def test_a_dry_run_refuses_an_unknown_parameter_before_asking_anything(env: Env) -> None:
    result = invoke(env, "infra", "deploy", "--stack", unique_prefix(), "--dry-run", "-p", "Nope=1")
    assert result.exit_code == 2
    assert "Unknown parameter 'Nope'" in result.stderr


class ScriptedCloudFormation:
    """The calls a preview makes, answered from a script; records what it was asked."""

    def __init__(self, status: str | None, change_set: list[dict[str, Any]]) -> None:
        self.status = status
        self.replies = list(change_set)
        self.calls: list[str] = []

    def describe_stacks(self, StackName: str) -> dict[str, Any]:
        self.calls.append("describe_stacks")
        if self.status is None:
            error = {"Code": "ValidationError", "Message": "Stack with id x does not exist"}
            raise ClientError({"Error": error}, "DescribeStacks")
        stack = {"StackId": "arn:stack/x", "StackStatus": self.status, "Parameters": []}
        return {"Stacks": [stack]}

    def get_template_summary(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append("get_template_summary")
        return {"Parameters": [{"ParameterKey": "Secret", "NoEcho": True}]}

    def create_change_set(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append("create_change_set")
        return {"Id": "arn:changeSet/p", "StackId": "arn:stack/x"}

    def describe_change_set(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append("describe_change_set")
        return self.replies.pop(0)

    def delete_change_set(self, **kwargs: Any) -> None:
        self.calls.append("delete_change_set")

    def delete_stack(self, **kwargs: Any) -> None:
        self.calls.append("delete_stack")


def preview(client: ScriptedCloudFormation) -> StackPreview:
    return Preview(client, "app", sleep=lambda _: None).run("Resources: {}", {}, {})


def test_a_change_set_with_nothing_to_change_says_so_and_is_deleted() -> None:
    empty = {
        "Status": "FAILED",
        "StatusReason": "The submitted information didn't contain changes.",
    }
    client = ScriptedCloudFormation("UPDATE_COMPLETE", [{"Status": "CREATE_PENDING"}, empty])
    assert preview(client).changes == []
    assert client.calls[-1] == "delete_change_set"  # an existing stack is left alone


def test_a_modification_says_whether_it_replaces_the_resource_across_pages() -> None:
    first = {
        "Status": "CREATE_COMPLETE",
        "NextToken": "2",
        "Changes": [
            {
                "Type": "Resource",
                "ResourceChange": {
                    "Action": "Modify",
                    "LogicalResourceId": "JobQueue",
                    "ResourceType": "AWS::SQS::Queue",
                    "Replacement": "True",
                },
            }
        ],
    }
    second = {
        "Status": "CREATE_COMPLETE",
        "Changes": [
            {
                "Type": "Resource",
                "ResourceChange": {
                    "Action": "Remove",
                    "LogicalResourceId": "OldAlarm",
                    "ResourceType": "AWS::CloudWatch::Alarm",
                },
            }
        ],
    }
    client = ScriptedCloudFormation(None, [first, second])
    assert preview(client).changes == [
        PlannedChange("Modify", "JobQueue", "AWS::SQS::Queue", "True"),
        PlannedChange("Remove", "OldAlarm", "AWS::CloudWatch::Alarm", None),
    ]
    assert client.calls[-2:] == ["delete_change_set", "delete_stack"]  # a new stack's shell


def test_a_stack_that_would_be_made_again_is_not_planned() -> None:
    client = ScriptedCloudFormation("ROLLBACK_COMPLETE", [])
    shown = preview(client)
    assert shown.changes is None and "deletes it and creates it again" in shown.note
    assert "create_change_set" not in client.calls


def test_secret_parameters_are_never_shown() -> None:
    chosen = [
        {"ParameterKey": "Secret", "ParameterValue": "s3cr3t-ü"},
        {"ParameterKey": "Token", "UsePreviousValue": True},
        {"ParameterKey": "QueueName", "ParameterValue": "mails"},
    ]
    shown = shown_parameters(chosen, {"QueueName": "mails"}, {"Secret", "Token"})
    assert shown == {"QueueName": "mails", "Secret": MASKED, "Token": KEPT}
    assert list(shown) == ["QueueName", "Secret", "Token"]  # what was given comes first
