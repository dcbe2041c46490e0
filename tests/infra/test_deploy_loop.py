"""The deploy loop against a scripted CloudFormation: rollbacks, no-op updates, states.

The emulator finishes every operation at once and never rolls back, so the paths that
need a slow or failing CloudFormation run here, on a fake client whose stack walks
through a scripted list of statuses (one step per ``DescribeStacks``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError  # type: ignore[import-untyped]

from sqsjobs.infra import (
    DeployOutcome,
    StackDeployError,
    StackEvent,
    StackOutputsMissing,
    template_text,
)
from sqsjobs.infra._deploy import CAPABILITIES, Deployment, stack_policy
from sqsjobs.infra._stack import Declared, chosen_parameters, missing_outputs, root_causes
from sqsjobs.infra._templates import declared_outputs

NAME = "jobs"
STACK_TYPE = "AWS::CloudFormation::Stack"
SUMMARY = {
    "Parameters": [
        {"ParameterKey": "QueueName", "DefaultValue": "default", "NoEcho": False},
        {"ParameterKey": "MaxReceiveCount", "DefaultValue": "10", "NoEcho": False},
    ]
}


def event(
    n: int, logical_id: str, status: str, reason: str | None = None, kind: str = "AWS::SQS::Queue"
) -> dict[str, Any]:
    return {
        "EventId": f"e{n}",
        "Timestamp": datetime(2030, 1, 1, 0, 0, n, tzinfo=UTC),
        "LogicalResourceId": logical_id,
        "ResourceType": STACK_TYPE if logical_id == NAME else kind,
        "ResourceStatus": status,
        "ResourceStatusReason": reason,
    }


def refused(message: str) -> ClientError:
    return ClientError({"Error": {"Code": "ValidationError", "Message": message}}, "Op")


class FakeCloudFormation:
    """One stack. Each DescribeStacks returns the first of ``statuses`` and moves on (the
    last one stays); once an operation has started, each also reveals one pending event."""

    def __init__(self, statuses: Iterable[str] = (), events: Iterable[dict[str, Any]] = ()):
        self.statuses = list(statuses)
        self.pending = list(events)  # revealed one per DescribeStacks, oldest first
        self.events: list[dict[str, Any]] = []  # newest first, as AWS returns them
        self.exists = bool(self.statuses)
        self.parameters: list[dict[str, Any]] = [
            {"ParameterKey": "QueueName", "ParameterValue": "high"}
        ]
        self.tags: list[dict[str, str]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.update_error: ClientError | None = None
        self.create_error: ClientError | None = None
        self.started = False

    def describe_stacks(self, **kwargs: Any) -> dict[str, Any]:
        if not self.exists:
            raise refused(f"Stack with id {kwargs['StackName']} does not exist")
        status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        if self.started and self.pending:
            self.events.insert(0, self.pending.pop(0))
        stack = {
            "StackId": f"arn:stack/{NAME}/1",
            "StackName": NAME,
            "StackStatus": status,
            "Parameters": self.parameters,
            "Tags": self.tags,
            "Outputs": [{"OutputKey": "TableName", "OutputValue": "jobs-table"}],
        }
        return {"Stacks": [stack]}

    def describe_stack_events(self, **kwargs: Any) -> dict[str, Any]:
        return {"StackEvents": list(self.events)}

    def get_template_summary(self, **kwargs: Any) -> dict[str, Any]:
        return SUMMARY

    def create_stack(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("create_stack", kwargs))
        self.started = True
        if self.create_error is not None:
            raise self.create_error
        self.exists = True
        return {"StackId": f"arn:stack/{NAME}/1"}

    def update_stack(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("update_stack", kwargs))
        self.started = True
        if self.update_error is not None:
            raise self.update_error
        return {"StackId": f"arn:stack/{NAME}/1"}

    def delete_stack(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("delete_stack", kwargs))
        self.started = True
        return {}

    def set_stack_policy(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("set_stack_policy", kwargs))
        return {}


def run(
    fake: FakeCloudFormation,
    given: dict[str, str] | None = None,
    timeout: float = 100.0,
    **options: Any,
) -> tuple[dict[str, str], list[StackEvent], list[float]]:
    seen: list[StackEvent] = []
    slept: list[float] = []
    clock = iter(range(0, 10_000, 10))
    deployment = Deployment(
        fake,
        NAME,
        seen.append,
        poll_interval=10.0,
        timeout=timeout,
        sleep=slept.append,
        clock=lambda: float(next(clock)),
    )
    return deployment.run("template", given or {}, **options), seen, slept


def test_create_waits_and_reports_each_event_once_in_order() -> None:
    fake = FakeCloudFormation(
        events=[
            event(1, NAME, "CREATE_IN_PROGRESS", "User Initiated"),
            event(2, "JobQueue", "CREATE_IN_PROGRESS"),
            event(3, "JobQueue", "CREATE_COMPLETE"),
            event(4, NAME, "CREATE_COMPLETE"),
        ]
    )
    fake.statuses = ["CREATE_IN_PROGRESS"] * 4 + ["CREATE_COMPLETE"]
    outputs, seen, slept = run(fake, {"QueueName": "high"})
    assert outputs == {"TableName": "jobs-table"}
    assert [e.event_id for e in seen] == ["e1", "e2", "e3", "e4"]
    assert slept == [10.0] * 4
    (name, request), *_ = fake.calls
    assert name == "create_stack"
    assert request["Capabilities"] == CAPABILITIES
    assert request["Parameters"] == [
        {"ParameterKey": "QueueName", "ParameterValue": "high"},
        {"ParameterKey": "MaxReceiveCount", "ParameterValue": "10"},
    ]


def test_rollback_raises_with_the_failed_resource_and_its_reason() -> None:
    fake = FakeCloudFormation(
        events=[
            event(1, NAME, "CREATE_IN_PROGRESS", "User Initiated"),
            event(2, "DeadLetterQueue", "CREATE_FAILED", "Resource creation cancelled"),
            event(3, "JobQueue", "CREATE_FAILED", "Queue name too long"),
            event(4, NAME, "ROLLBACK_IN_PROGRESS", "The following resource(s) failed"),
            event(5, NAME, "ROLLBACK_COMPLETE"),
        ]
    )
    fake.statuses = ["CREATE_IN_PROGRESS"] * 4 + ["ROLLBACK_COMPLETE"]
    with pytest.raises(StackDeployError) as raised:
        run(fake)
    error = raised.value
    assert str(error) == (
        "Stack 'jobs' failed to deploy (ROLLBACK_COMPLETE): "
        "JobQueue (AWS::SQS::Queue) CREATE_FAILED: Queue name too long"
    )
    assert (error.stack_name, error.status) == (NAME, "ROLLBACK_COMPLETE")
    assert [e.logical_id for e in error.failures] == ["JobQueue"]


def test_update_keeps_previous_values_and_reports_only_new_events() -> None:
    fake = FakeCloudFormation(["UPDATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"])
    fake.events = [event(1, NAME, "CREATE_COMPLETE")]
    fake.pending = [event(2, NAME, "UPDATE_IN_PROGRESS"), event(3, NAME, "UPDATE_COMPLETE")]
    _, seen, _ = run(fake, {"MaxReceiveCount": "3"})
    assert [e.event_id for e in seen] == ["e2", "e3"]
    (name, request), *_ = fake.calls
    assert name == "update_stack"
    assert request["Parameters"] == [
        {"ParameterKey": "MaxReceiveCount", "ParameterValue": "3"},
        {"ParameterKey": "QueueName", "ParameterValue": "high"},
    ]


def test_create_tags_the_stack_and_sets_its_policy() -> None:
    fake = FakeCloudFormation()
    fake.statuses = ["CREATE_COMPLETE"]
    policy = stack_policy("sqsjobs")
    run(fake, tags={"team": "paiements", "owner": "zoë"}, policy=policy)
    [(name, request)] = fake.calls
    assert name == "create_stack"
    assert request["Tags"] == [
        {"Key": "owner", "Value": "zoë"},
        {"Key": "team", "Value": "paiements"},
    ]
    assert request["StackPolicyBody"] == policy


def test_create_without_tags_or_policy_sends_neither() -> None:
    fake = FakeCloudFormation()
    fake.statuses = ["CREATE_COMPLETE"]
    run(fake)
    [(_, request)] = fake.calls
    assert "Tags" not in request
    assert "StackPolicyBody" not in request


def test_update_sets_the_stack_policy_first_so_that_it_governs_the_update() -> None:
    """A stack made before the policy existed is protected from its first update on."""
    fake = FakeCloudFormation(["UPDATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"])
    policy = stack_policy("sqsjobs")
    run(fake, policy=policy)
    assert [name for name, _ in fake.calls] == ["set_stack_policy", "update_stack"]
    assert fake.calls[0][1] == {"StackName": f"arn:stack/{NAME}/1", "StackPolicyBody": policy}


def test_update_with_nothing_to_change_still_sets_the_policy() -> None:
    fake = FakeCloudFormation(["UPDATE_COMPLETE"])
    fake.update_error = refused("No updates are to be performed.")
    run(fake, policy=stack_policy("sqsjobs"))
    assert [name for name, _ in fake.calls] == ["set_stack_policy", "update_stack"]


def test_update_adds_tags_to_those_of_the_stack() -> None:
    """CloudFormation replaces all of a stack's tags with those of an update."""
    fake = FakeCloudFormation(["UPDATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"])
    fake.tags = [{"Key": "team", "Value": "billing"}, {"Key": "env", "Value": "prod-eu"}]
    run(fake, tags={"team": "paiements"})
    [(_, request)] = fake.calls
    assert request["Tags"] == [
        {"Key": "env", "Value": "prod-eu"},
        {"Key": "team", "Value": "paiements"},
    ]


def test_update_without_tags_leaves_those_of_the_stack() -> None:
    fake = FakeCloudFormation(["UPDATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"])
    fake.tags = [{"Key": "team", "Value": "billing"}]
    run(fake)
    [(_, request)] = fake.calls
    assert "Tags" not in request


def test_an_update_that_would_replace_the_table_fails_loudly() -> None:
    """What CloudFormation reports when the stack policy denies a replacement."""
    denied = (
        "Action denied by stack policy: Statement [#1] does not allow [Update:Replace] "
        "for resource [LogicalResourceId/JobTable]"
    )
    fake = FakeCloudFormation(["UPDATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_ROLLBACK_COMPLETE"])
    fake.pending = [
        event(2, NAME, "UPDATE_IN_PROGRESS", "User Initiated"),
        event(3, "JobTable", "UPDATE_FAILED", denied, kind="AWS::DynamoDB::Table"),
        event(4, NAME, "UPDATE_ROLLBACK_COMPLETE"),
    ]
    with pytest.raises(StackDeployError) as raised:
        run(fake, policy=stack_policy("sqsjobs"))
    assert str(raised.value) == (
        "Stack 'jobs' failed to deploy (UPDATE_ROLLBACK_COMPLETE): "
        f"JobTable (AWS::DynamoDB::Table) UPDATE_FAILED: {denied}"
    )


def test_update_with_nothing_to_change_succeeds_at_once() -> None:
    fake = FakeCloudFormation(["UPDATE_COMPLETE"])
    fake.update_error = refused("No updates are to be performed.")
    outputs, seen, slept = run(fake)
    assert (outputs, seen, slept) == ({"TableName": "jobs-table"}, [], [])


def test_update_refused_for_another_reason_raises() -> None:
    fake = FakeCloudFormation(["CREATE_COMPLETE"])
    fake.update_error = refused("Parameters: [Nope] do not exist in the template")
    with pytest.raises(StackDeployError, match=r"refused to update stack 'jobs': Parameters"):
        run(fake, {"Nope": "1"})


def test_create_refused_raises_with_the_reason() -> None:
    fake = FakeCloudFormation()
    fake.create_error = refused("Parameters: [TableName] must have values")
    with pytest.raises(StackDeployError, match=r"refused to create stack 'jobs': .*TableName"):
        run(fake)


def test_a_stack_whose_creation_rolled_back_is_deleted_and_created_again() -> None:
    fake = FakeCloudFormation(["ROLLBACK_COMPLETE", "DELETE_IN_PROGRESS", "DELETE_COMPLETE"])
    fake.pending = [event(2, NAME, "DELETE_IN_PROGRESS"), event(3, NAME, "DELETE_COMPLETE")]
    original_create = fake.create_stack

    def create_stack(**kwargs: Any) -> dict[str, Any]:
        # A new stack: new statuses, and none of the old stack's events.
        fake.statuses = ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]
        fake.events = []
        fake.pending = [event(4, NAME, "CREATE_IN_PROGRESS"), event(5, NAME, "CREATE_COMPLETE")]
        return original_create(**kwargs)

    fake.create_stack = create_stack  # type: ignore[method-assign]
    _, seen, _ = run(fake)
    assert [name for name, _ in fake.calls] == ["delete_stack", "create_stack"]
    assert [e.event_id for e in seen] == ["e2", "e3", "e4", "e5"]


@pytest.mark.parametrize(
    ("status", "hint"),
    [
        ("UPDATE_IN_PROGRESS", "another operation is in progress"),
        ("UPDATE_ROLLBACK_FAILED", "fix or delete it"),
    ],
)
def test_a_stack_in_another_state_is_left_alone(status: str, hint: str) -> None:
    fake = FakeCloudFormation([status])
    with pytest.raises(StackDeployError, match=f"cannot be deployed while {status}: {hint}"):
        run(fake)
    assert fake.calls == []


def test_an_operation_that_outlasts_the_timeout_raises() -> None:
    fake = FakeCloudFormation()
    fake.statuses = ["CREATE_IN_PROGRESS"]
    with pytest.raises(StackDeployError, match=r"still CREATE_IN_PROGRESS after 30 s"):
        run(fake, timeout=30.0)


# -- the pure rules ------------------------------------------------------------------------


def test_parameters_given_then_previous_then_default() -> None:
    declared = {
        "Given": Declared("d", no_echo=False),
        "Kept": Declared("d", no_echo=False),
        "Secret": Declared(None, no_echo=True),
        "Defaulted": Declared("7", no_echo=False),
        "Required": Declared(None, no_echo=False),
    }
    previous = {"Given": "old", "Kept": "old", "Secret": "****", "Dropped": "old"}
    assert chosen_parameters({"Given": "new", "Unknown": "x"}, declared, previous) == [
        {"ParameterKey": "Given", "ParameterValue": "new"},
        {"ParameterKey": "Unknown", "ParameterValue": "x"},
        {"ParameterKey": "Kept", "ParameterValue": "old"},
        {"ParameterKey": "Secret", "UsePreviousValue": True},
        {"ParameterKey": "Defaulted", "ParameterValue": "7"},
    ]


def test_root_causes_fall_back_to_whatever_failed() -> None:
    cancelled = StackEvent.from_reply(event(1, "A", "CREATE_FAILED", "Resource creation cancelled"))
    stack = StackEvent.from_reply(event(2, NAME, "UPDATE_FAILED", "stack says no"))
    assert root_causes(NAME, [cancelled, stack]) == [cancelled]
    assert root_causes(NAME, [stack]) == [stack]
    assert root_causes(NAME, []) == []


def test_a_deploy_says_whether_it_created_updated_or_changed_nothing() -> None:
    created = FakeCloudFormation()
    created.statuses = ["CREATE_COMPLETE"]
    updated = FakeCloudFormation(["UPDATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"])
    unchanged = FakeCloudFormation(["UPDATE_ROLLBACK_COMPLETE"])
    unchanged.update_error = refused("No updates are to be performed.")
    said = [
        (outputs.outcome, outputs.status)
        for outputs, _, _ in (run(created), run(updated), run(unchanged))
    ]
    assert said == [
        (DeployOutcome.CREATED, "CREATE_COMPLETE"),
        (DeployOutcome.UPDATED, "UPDATE_COMPLETE"),
        (DeployOutcome.UNCHANGED, "UPDATE_ROLLBACK_COMPLETE"),
    ]


TEMPLATE = """\
Parameters:
  QueueName:
    Type: String
Outputs:
  TableName:
    Value: !Ref JobTable
  # what stores read
  QueueUrls:
    Value: !Sub "${QueueName}=${JobQueue}"
  KeyUsePolicyArn:
    Condition: HasKmsKey
    Value: !Ref KeyUsePolicy
  WorkerPolicyArn:
    Value: !Ref WorkerPolicy
"""


@pytest.mark.parametrize("nothing_to_change", [False, True])
def test_a_stack_that_settles_without_declared_outputs_fails_the_deploy(
    nothing_to_change: bool,
) -> None:
    """What the emulator does to a stack whose update changed a table: UPDATE_COMPLETE,
    and the outputs naming it gone. A re-deploy that changes nothing fails alike."""
    fake = FakeCloudFormation(["UPDATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"])
    if nothing_to_change:
        fake.update_error = refused("No updates are to be performed.")
    with pytest.raises(StackOutputsMissing) as raised:
        Deployment(fake, NAME, sleep=lambda _: None).run(TEMPLATE, {})
    error = raised.value
    assert isinstance(error, StackDeployError)
    # Only TableName is there; the conditional output is not asked for.
    assert error.missing == ("QueueUrls", "WorkerPolicyArn")
    assert error.outputs == {"TableName": "jobs-table"}
    assert (error.stack_name, error.status) == (NAME, "UPDATE_COMPLETE")
    assert str(error).startswith(
        "Stack 'jobs' is UPDATE_COMPLETE but lacks output(s) QueueUrls, WorkerPolicyArn of "
        "its template, which stores and --stack read."
    )


def test_the_outputs_a_template_declares_are_read_with_their_conditions() -> None:
    assert declared_outputs(TEMPLATE) == {
        "TableName": None,
        "QueueUrls": None,
        "KeyUsePolicyArn": "HasKmsKey",
        "WorkerPolicyArn": None,
    }
    declared = declared_outputs(template_text("sqsjobs"))
    assert {"TableName", "QueueUrls", "RecordFormat", "IndexShards"} <= set(declared)
    assert declared["EventSourceMappingId"] == "HasLambdaWorker"
    assert missing_outputs(declared, {}) == [k for k, v in declared.items() if v is None]
