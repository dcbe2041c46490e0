"""Deploying the templates into the AWS emulator through CloudFormation.

The emulator creates the queues, the table and the policies and wires them together,
which is what these tests check (with the store's own layout constants); settings it
ignores are checked on the templates in ``test_templates``. It does not create the
alarms or the queue policies and warns that it cannot: those warnings are expected here.
It keeps a stack's policy and tags without acting on them (it never refuses an update,
nor tags the resources), so the tests check that the deploy hands them over.
"""

from __future__ import annotations

import io
import json
import uuid
import zipfile
from dataclasses import dataclass
from typing import Any

import boto3  # type: ignore[import-untyped]
import pytest

from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire import index_reads as _index_reads
from sqsjobs.aws.wire.index_keys import (
    DEFAULT_SHARDS,
    INDEX,
    INDEX_PROJECTION,
    LEGACY_INDEX,
    list_pk,
    shard,
)
from sqsjobs.aws.wire.items import item_from_job, job_key
from sqsjobs.infra import (
    StackEvent,
    StackOutputsMissing,
    deploy_stack,
    template_text,
)
from sqsjobs.infra._deploy import Deployment, stack_policy
from tests.upgrade.previous import PREVIOUS_0_2, git, previous_file

from .support import load_template, sample_job

TEMPLATE_FILE = "src/sqsjobs/infra/sqsjobs.yaml"

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch.+Alarm:UserWarning")


@dataclass(frozen=True)
class Deployed:
    name: str
    outputs: dict[str, str]
    events: list[StackEvent]

    def url(self, output: str) -> str:
        queue, _, url = self.outputs[output].partition("=")
        assert queue == "default"
        return url


@pytest.fixture(scope="module")
def main_stack(aws_endpoint: str) -> Deployed:
    name = f"t{uuid.uuid4().hex[:12]}"
    events: list[StackEvent] = []
    outputs = deploy_stack(name, endpoint_url=aws_endpoint, on_event=events.append)
    return Deployed(name, outputs, events)


def client(service: str, endpoint: str) -> Any:
    return boto3.session.Session().client(service, endpoint_url=endpoint)


def queue_attributes(endpoint: str, url: str) -> dict[str, str]:
    reply = client("sqs", endpoint).get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
    return dict(reply["Attributes"])


def stack_parameters(endpoint: str, name: str) -> dict[str, str]:
    (stack,) = client("cloudformation", endpoint).describe_stacks(StackName=name)["Stacks"]
    return {p["ParameterKey"]: p["ParameterValue"] for p in stack["Parameters"]}


def stack_tags(endpoint: str, name: str) -> dict[str, str]:
    (stack,) = client("cloudformation", endpoint).describe_stacks(StackName=name)["Stacks"]
    return {t["Key"]: t["Value"] for t in stack.get("Tags", [])}


def policy_of(endpoint: str, name: str) -> str | None:
    reply = client("cloudformation", endpoint).get_stack_policy(StackName=name)
    return reply.get("StackPolicyBody") or None


def test_outputs_are_the_ones_the_template_declares(main_stack: Deployed) -> None:
    conditional = {"EventSourceMappingId", "KeyUsePolicyArn"}  # their conditions are off here
    declared = set(load_template("sqsjobs")["Outputs"]) - conditional
    assert set(main_stack.outputs) == declared
    assert main_stack.outputs["QueueUrls"].startswith("default=https://")
    assert main_stack.outputs["QueueArn"].endswith(f":{main_stack.name}-default")
    assert main_stack.outputs["DeadLetterQueueArn"].endswith(f":{main_stack.name}-default-dlq")
    for role in ("Producer", "Worker", "Reader", "Operator"):
        assert f":policy/{main_stack.name}-{role}Policy-" in main_stack.outputs[f"{role}PolicyArn"]


def test_progress_is_reported_as_stack_events(main_stack: Deployed) -> None:
    own = [e.status for e in main_stack.events if e.logical_id == main_stack.name]
    assert own[0] == "CREATE_IN_PROGRESS"
    assert own[-1] == "CREATE_COMPLETE"
    assert len({e.event_id for e in main_stack.events}) == len(main_stack.events)


def test_job_queue_redrives_to_its_dead_letter_queue(
    main_stack: Deployed, aws_endpoint: str
) -> None:
    source = queue_attributes(aws_endpoint, main_stack.url("QueueUrls"))
    dead = queue_attributes(aws_endpoint, main_stack.url("DeadLetterQueueUrls"))
    assert json.loads(source["RedrivePolicy"]) == {
        "deadLetterTargetArn": dead["QueueArn"],
        "maxReceiveCount": 10,
    }
    assert dead["QueueArn"] == main_stack.outputs["DeadLetterQueueArn"]
    assert source["QueueArn"] == main_stack.outputs["QueueArn"]
    assert (source["MessageRetentionPeriod"], dead["MessageRetentionPeriod"]) == (
        "345600",
        "1209600",
    )
    for attributes in (source, dead):
        assert attributes["MaximumMessageSize"] == "262144"
        assert attributes["SqsManagedSseEnabled"] == "true"
        assert "KmsMasterKeyId" not in attributes
    assert (source["ReceiveMessageWaitTimeSeconds"], source["VisibilityTimeout"]) == ("20", "30")


def test_table_has_the_store_layout(main_stack: Deployed, aws_endpoint: str) -> None:
    dynamodb = client("dynamodb", aws_endpoint)
    name = main_stack.outputs["TableName"]
    described = dynamodb.describe_table(TableName=name)["Table"]
    assert described["KeySchema"] == [{"AttributeName": k, "KeyType": "HASH"} for k in job_key("x")]
    assert described["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    indexes = {i["IndexName"]: i for i in described["GlobalSecondaryIndexes"]}
    assert sorted(indexes) == [INDEX, LEGACY_INDEX]  # KeepStatusIndex defaults to true
    assert indexes[INDEX]["Projection"] == {
        "ProjectionType": "INCLUDE",
        "NonKeyAttributes": list(INDEX_PROJECTION),
    }
    assert indexes[LEGACY_INDEX]["Projection"] == {"ProjectionType": "ALL"}
    # The emulator keeps the parameter's text; AWS reads it as a boolean.
    assert str(described["DeletionProtectionEnabled"]).lower() == "true"
    # The store's own item and list query work on the deployed table and index.
    job = sample_job()
    dynamodb.put_item(TableName=name, Item=item_from_job(job, None, DEFAULT_SHARDS))
    query = _index_reads.query_index(
        name,
        _index_reads.CURRENT,
        list_pk(job.queue, shard(job.id, DEFAULT_SHARDS)),
        _index_reads.FIRST_KEY,
        _index_reads.LAST_KEY,
        limit=10,
        start=None,
    )
    (found,) = dynamodb.query(**query.params)["Items"]
    assert found["pk"] == {"S": f"job#{job.id}"}
    assert set(found) == {"pk", "list_pk", "list_sk", "phase", "name"}  # no payload copied


def test_queue_template_adds_a_queue_to_the_same_table(
    main_stack: Deployed, aws_endpoint: str, stack_name: str
) -> None:
    table = main_stack.outputs["TableName"]
    outputs = deploy_stack(
        stack_name,
        template="sqsjobs-queue",
        endpoint_url=aws_endpoint,
        parameters={"TableName": table, "QueueName": "high"},
    )
    assert outputs["TableName"] == table
    queue, _, url = outputs["QueueUrls"].partition("=")
    assert queue == "high"
    assert url != main_stack.url("QueueUrls")
    redrive = json.loads(queue_attributes(aws_endpoint, url)["RedrivePolicy"])
    assert redrive["deadLetterTargetArn"] == outputs["DeadLetterQueueArn"]
    assert outputs["DeadLetterQueueUrls"].startswith("high=")
    assert policy_of(aws_endpoint, stack_name) is None  # it has no table to keep


# -- keeping the table, keys, tags ----------------------------------------------------------


def test_the_stack_policy_keeps_the_table(main_stack: Deployed, aws_endpoint: str) -> None:
    policy = policy_of(aws_endpoint, main_stack.name)
    assert policy is not None
    assert policy == stack_policy("sqsjobs")
    denied = json.loads(policy)["Statement"][1]
    assert (denied["Effect"], denied["Resource"]) == ("Deny", ["LogicalResourceId/JobTable"])


def test_a_stack_made_without_the_policy_gets_it_and_keeps_its_table(
    aws_endpoint: str, stack_name: str
) -> None:
    """A stack deployed before the policy existed keeps its table (its generated name)."""
    cloudformation = client("cloudformation", aws_endpoint)
    # As earlier releases deployed: no stack policy. (The emulator cannot update a stack
    # created without explicit parameter values, so the deploy loop creates it.)
    table = Deployment(cloudformation, stack_name).run(template_text(), {})["TableName"]
    assert policy_of(aws_endpoint, stack_name) is None
    # (A table property changed by an update makes the emulator drop the TableName output.)
    outputs = deploy_stack(
        stack_name, endpoint_url=aws_endpoint, parameters={"MessageRetentionPeriod": "86400"}
    )
    assert outputs["TableName"] == table
    assert client("dynamodb", aws_endpoint).describe_table(TableName=table)["Table"]
    assert policy_of(aws_endpoint, stack_name) == stack_policy("sqsjobs")


def test_an_update_the_emulator_cannot_make_fails_the_deploy_naming_what_is_gone(
    aws_endpoint: str, stack_name: str
) -> None:
    """Updating a stack of 0.1's template changes its table (the ``by_queue`` index) and
    its managed policies, which the emulator cannot update in place: it reports
    UPDATE_COMPLETE, leaves the table as it was and drops both from the stack, outputs
    and all. On AWS the update adds the index; here the deploy fails, saying so."""
    cloudformation = client("cloudformation", aws_endpoint)
    made = Deployment(cloudformation, stack_name).run(previous_file(TEMPLATE_FILE), {})
    with pytest.raises(StackOutputsMissing) as raised:
        deploy_stack(stack_name, endpoint_url=aws_endpoint)
    error = raised.value
    assert error.status == "UPDATE_COMPLETE"
    assert error.missing == (
        "TableName",
        "ProducerPolicyArn",
        "WorkerPolicyArn",
        "ReaderPolicyArn",
        "OperatorPolicyArn",
    )
    assert error.outputs["RecordFormat"] == "1"  # the rest of the update went through
    indexes = client("dynamodb", aws_endpoint).describe_table(TableName=made["TableName"])
    assert [i["IndexName"] for i in indexes["Table"]["GlobalSecondaryIndexes"]] == [LEGACY_INDEX]


def test_a_stack_of_the_release_before_updates_but_for_the_policy_the_emulator_drops(
    aws_endpoint: str, stack_name: str
) -> None:
    """0.2's stack updates in place: same table, every output but the managed policies
    whose grants this release widens (the worker's for presence records; the producer's,
    the worker's and the operator's for jobs that wait for others and batches): the
    emulator cannot update a managed policy and drops it from the stack, so the deploy
    fails naming them. On AWS the policies are updated and every output stays."""
    cloudformation = client("cloudformation", aws_endpoint)
    body = git("show", f"{PREVIOUS_0_2}:{TEMPLATE_FILE}").decode()  # 0.2.0's template
    made = Deployment(cloudformation, stack_name).run(body, {})
    with pytest.raises(StackOutputsMissing) as raised:
        deploy_stack(stack_name, endpoint_url=aws_endpoint)
    error = raised.value
    widened = ("ProducerPolicyArn", "WorkerPolicyArn", "OperatorPolicyArn")
    assert (error.status, error.missing) == ("UPDATE_COMPLETE", widened)
    assert error.outputs["TableName"] == made["TableName"]
    assert set(made) - set(widened) <= set(error.outputs)


def test_stack_tags_are_given_added_to_and_kept(aws_endpoint: str, stack_name: str) -> None:
    tags = {"team": "paiements", "cost-centre": "Zürich-42"}
    deploy_stack(stack_name, endpoint_url=aws_endpoint, tags=tags)
    assert stack_tags(aws_endpoint, stack_name) == tags
    deploy_stack(
        stack_name,
        endpoint_url=aws_endpoint,
        tags={"team": "billing"},
        parameters={"VisibilityTimeout": "45"},
    )
    assert stack_tags(aws_endpoint, stack_name) == {"team": "billing", "cost-centre": "Zürich-42"}
    deploy_stack(stack_name, endpoint_url=aws_endpoint, parameters={"VisibilityTimeout": "60"})
    assert stack_tags(aws_endpoint, stack_name) == {"team": "billing", "cost-centre": "Zürich-42"}


def test_a_customer_managed_key_encrypts_both_queues(aws_endpoint: str, stack_name: str) -> None:
    key = client("kms", aws_endpoint).create_key(Description=f"{stack_name} jobs")["KeyMetadata"]
    outputs = deploy_stack(
        stack_name,
        endpoint_url=aws_endpoint,
        parameters={"KmsKeyArn": key["Arn"], "DeletionProtectionEnabled": "false"},
    )
    for output in ("QueueUrls", "DeadLetterQueueUrls"):
        url = outputs[output].partition("=")[2]
        assert queue_attributes(aws_endpoint, url)["KmsMasterKeyId"] == key["Arn"]
    described = client("dynamodb", aws_endpoint).describe_table(TableName=outputs["TableName"])
    # The emulator keeps the parameter's text; AWS reads it as a boolean.
    assert str(described["Table"]["DeletionProtectionEnabled"]).lower() == "false"


def test_redeploy_keeps_parameters_not_given(aws_endpoint: str, stack_name: str) -> None:
    first = deploy_stack(stack_name, parameters={"MaxReceiveCount": "3"}, endpoint_url=aws_endpoint)
    events: list[StackEvent] = []
    again = deploy_stack(stack_name, endpoint_url=aws_endpoint, on_event=events.append)
    assert again == first
    assert stack_parameters(aws_endpoint, stack_name)["MaxReceiveCount"] == "3"
    # AWS finds nothing to do; the emulator runs an empty update.
    assert all(e.status.startswith("UPDATE_") for e in events)


def test_redeploy_applies_changed_parameters(aws_endpoint: str, stack_name: str) -> None:
    outputs = deploy_stack(stack_name, endpoint_url=aws_endpoint)
    events: list[StackEvent] = []
    deploy_stack(
        stack_name,
        parameters={"VisibilityTimeout": "45"},
        endpoint_url=aws_endpoint,
        on_event=events.append,
    )
    url = outputs["QueueUrls"].partition("=")[2]
    assert queue_attributes(aws_endpoint, url)["VisibilityTimeout"] == "45"
    assert [e.status for e in events if e.logical_id == stack_name][-1] == "UPDATE_COMPLETE"


def test_endpoint_comes_from_the_environment(
    aws_endpoint: str, stack_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", aws_endpoint)
    outputs = deploy_stack(stack_name)
    assert outputs["QueueArn"].endswith(f":{stack_name}-default")


def test_a_reconciler_function_is_invoked_on_a_schedule(aws_endpoint: str, stack_name: str) -> None:
    """Lambda-only deployments: the template schedules make_reconcile_handler's function."""
    function_arn = reconcile_function(aws_endpoint, f"{stack_name}-reconcile")
    deploy_stack(
        stack_name,
        endpoint_url=aws_endpoint,
        parameters={"ReconcileFunctionArn": function_arn},
    )
    events = client("events", aws_endpoint)
    [rule] = [
        r
        for r in events.list_rules()["Rules"]
        if r["Description"].endswith("queue default") and r["Name"].startswith(stack_name)
    ]
    assert rule["ScheduleExpression"] == "rate(5 minutes)"
    assert rule["State"] == "ENABLED"
    [target] = events.list_targets_by_rule(Rule=rule["Name"])["Targets"]
    assert target["Arn"] == function_arn


def test_no_schedule_without_a_function(main_stack: Deployed, aws_endpoint: str) -> None:
    """Neither the reconciler's rule nor the cron function's without their parameters."""
    rules = client("events", aws_endpoint).list_rules()["Rules"]
    assert [r for r in rules if r["Name"].startswith(main_stack.name)] == []


@pytest.mark.parametrize("template", ["sqsjobs", "sqsjobs-queue"])
def test_a_cron_function_is_invoked_every_minute(
    template: str, main_stack: Deployed, aws_endpoint: str, stack_name: str
) -> None:
    """Lambda-only deployments: the template schedules make_cron_handler's function."""
    source = "from sqsjobs.aws.lambda_ import make_cron_handler\n"
    function_arn = reconcile_function(aws_endpoint, f"{stack_name}-cron", source)
    table = {"TableName": main_stack.outputs["TableName"], "QueueName": "crons"}
    deploy_stack(
        stack_name,
        template=template,
        endpoint_url=aws_endpoint,
        parameters={"CronFunctionArn": function_arn, **(table if "queue" in template else {})},
    )
    events = client("events", aws_endpoint)
    [rule] = [r for r in events.list_rules()["Rules"] if r["Name"].startswith(stack_name)]
    assert rule["Description"].startswith("sqsjobs cron ticks for queue ")
    assert (rule["ScheduleExpression"], rule["State"]) == ("rate(1 minute)", "ENABLED")
    [target] = events.list_targets_by_rule(Rule=rule["Name"])["Targets"]
    assert target["Arn"] == function_arn
    policy = client("lambda", aws_endpoint).get_policy(FunctionName=function_arn)["Policy"]
    [grant] = json.loads(policy)["Statement"]
    assert (grant["Action"], grant["Principal"]) == (
        "lambda:InvokeFunction",
        {"Service": "events.amazonaws.com"},
    )
    assert grant["Condition"]["ArnLike"]["AWS:SourceArn"] == rule["Arn"]


def reconcile_function(
    endpoint: str,
    name: str,
    source: str = "from sqsjobs.aws.lambda_ import make_reconcile_handler\n",
) -> str:
    """A Lambda function in the emulator (which cannot run one, only hold it): its ARN."""
    role = client("iam", endpoint).create_role(
        RoleName=name,
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Action": "sts:AssumeRole",
                        "Principal": {"Service": "lambda.amazonaws.com"},
                    }
                ],
            }
        ),
    )["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("app.py", source)
    function = client("lambda", endpoint).create_function(
        FunctionName=name,
        Runtime="python3.12",
        Role=role,
        Handler="app.reconcile",
        Code={"ZipFile": code.getvalue()},
        Timeout=60,
    )
    return str(function["FunctionArn"])


def test_a_stack_has_a_priority_lane_unless_told_otherwise(
    aws_endpoint: str, stack_name: str
) -> None:
    with_lane = deploy_stack(stack_name, endpoint_url=aws_endpoint)
    lane_url = with_lane["PriorityLaneUrls"].partition("=")[2]
    assert with_lane["PriorityLaneUrls"].startswith("default@1=")
    assert lane_url.endswith(f"/{stack_name}-default-lane")
    store = SqsJobStore.from_stack(stack_name, endpoint_url=aws_endpoint)
    try:
        assert dict(store._state.layout.lanes) == {"default": ((1, lane_url),)}
    finally:
        store.close()
    plain = f"{stack_name}-plain"
    without = deploy_stack(plain, endpoint_url=aws_endpoint, parameters={"PriorityLaneFrom": ""})
    assert "PriorityLaneUrls" not in without
    store = SqsJobStore.from_stack(plain, endpoint_url=aws_endpoint)
    try:
        assert dict(store._state.layout.lanes) == {}
    finally:
        store.close()
