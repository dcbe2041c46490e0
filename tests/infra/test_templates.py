"""What the templates say, read from the parsed YAML.

The local emulator creates the resources but ignores much of their configuration (TTL,
point-in-time recovery, table encryption, redrive-allow policies, queue policies, alarms,
and Lambda mappings cannot run there), so these settings are checked here, on the
template itself. The table must match the item layout the store writes
(``sqsjobs.aws.wire.items``, ``index_keys``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from cfnlint.schema import PROVIDER_SCHEMA_MANAGER  # type: ignore[import-untyped]

from sqsjobs.aws.wire.batches import root_key, shard_key
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS, INDEX, INDEX_PROJECTION, LEGACY_INDEX
from sqsjobs.aws.wire.items import (
    BODY_PREFIX,
    CHILDREN,
    RESENT_AT,
    TTL_ATTRIBUTE,
    item_from_job,
    job_key,
    job_pk,
)
from sqsjobs.aws.wire.presence import presence_pk
from sqsjobs.aws.wire.slots import slot_pk
from sqsjobs.aws.wire.sqs import MAX_BODY_BYTES, MAX_VISIBILITY, RETENTION_MARGIN
from sqsjobs.infra._deploy import PROTECTED, stack_policy

from .iam import like
from .support import load_template, references, resources, sample_job

MAIN = load_template("sqsjobs")
QUEUE = load_template("sqsjobs-queue")
JOBS = ("sqsjobs", "sqsjobs-queue")  # the templates with a job queue, of all TEMPLATES
BOTH = pytest.mark.parametrize("template", [MAIN, QUEUE], ids=list(JOBS))
BY_NAME = pytest.mark.parametrize(("name", "template"), list(zip(JOBS, [MAIN, QUEUE], strict=True)))
DLQ_RETENTION = 1_209_600  # 14 days, the SQS maximum
# sqsjobs.yaml only: about the table.
TABLE_PARAMETERS = {"DeletionProtectionEnabled", "KeepStatusIndex"}
TABLE_CONDITIONS = {"KeepStatusIndex"}
NO_VALUE = {"Ref": "AWS::NoValue"}
NOTIFY = {"Fn::If": ["HasAlarmTopic", [{"Ref": "AlarmTopicArn"}], NO_VALUE]}
# Resource types CloudFormation cannot tag, so stack tags do not reach them.
UNTAGGABLE = {"AWS::IAM::ManagedPolicy", "AWS::SQS::QueuePolicy", "AWS::Lambda::Permission"}

# What each role's policy grants; tests/infra/test_policies.py derives these from the
# calls each role sends on the emulator, and checks each statement's resources.
PRODUCER_ACTIONS = {
    "dynamodb:BatchGetItem",  # a job's parents (after=), a batch's shards (batch_status)
    "dynamodb:GetItem",  # get
    "dynamodb:PutItem",  # enqueue, enqueue_many, batch, enqueue_in_transaction's job entries
    "dynamodb:UpdateItem",  # a duplicate's re-send (resent_at), a child's link (children)
    "sqs:SendMessage",  # also SendMessageBatch
    "cloudformation:DescribeStacks",  # SqsJobStore.from_stack
}
WORKER_ACTIONS = {
    "dynamodb:BatchGetItem",  # the reconciler's records; payloads kept in body items
    "dynamodb:GetItem",
    "dynamodb:PutItem",  # cron ticks, handlers' follow-up jobs, limit slots
    "dynamodb:Query",  # the reconciler's stale pass
    "dynamodb:UpdateItem",
    "sqs:ChangeMessageVisibility",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
    "sqs:GetQueueUrl",  # the DLQ, when only the job queue is configured
    "sqs:ListDeadLetterSourceQueues",  # a work queue that is a DLQ is refused
    "sqs:ReceiveMessage",
    "sqs:SendMessage",
    "cloudformation:DescribeStacks",
}
READER_ACTIONS = {
    "dynamodb:BatchGetItem",  # the records a list or stats page points at
    "dynamodb:GetItem",
    "dynamodb:Query",
    "sqs:GetQueueAttributes",
    "sqs:GetQueueUrl",
    "sqs:ListDeadLetterSourceQueues",
    "cloudformation:DescribeStacks",
}
OPERATOR_ACTIONS = READER_ACTIONS | {
    "dynamodb:UpdateItem",
    "sqs:ChangeMessageVisibility",
    "sqs:DeleteMessage",
    "sqs:ReceiveMessage",
    "sqs:SendMessage",
}
POLICIES = {
    "ProducerPolicy": PRODUCER_ACTIONS,
    "WorkerPolicy": WORKER_ACTIONS,
    "ReaderPolicy": READER_ACTIONS,
    "OperatorPolicy": OPERATOR_ACTIONS,
}
# The resources a statement may name: the table, its list index, the two queues, the stack.
TABLE_ARNS = {
    "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${JobTable}",
    "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${TableName}",
}
RESOURCES = [
    *({"Fn::Sub": arn} for arn in TABLE_ARNS),
    *({"Fn::Sub": f"{arn}/index/{INDEX}"} for arn in TABLE_ARNS),
    *({"Fn::Sub": f"{arn}/index/{LEGACY_INDEX}"} for arn in TABLE_ARNS),
    {"Fn::GetAtt": ["JobQueue", "Arn"]},
    {"Fn::GetAtt": ["DeadLetterQueue", "Arn"]},
    {"Ref": "AWS::StackId"},
    # The priority lane, where the stack has one (PriorityLaneFrom).
    {
        "Fn::If": [
            "HasPriorityLane",
            {"Fn::GetAtt": ["PriorityLaneQueue", "Arn"]},
            {"Ref": "AWS::NoValue"},
        ]
    },
    {
        "Fn::If": [
            "HasPriorityLane",
            {"Fn::GetAtt": ["PriorityLaneQueue", "Arn"]},
            {"Fn::GetAtt": ["JobQueue", "Arn"]},
        ]
    },
]


def with_key(value: Any, otherwise: Any) -> dict[str, Any]:
    """``value`` when the stack has a KMS key, else ``otherwise``."""
    return {"Fn::If": ["HasKmsKey", value, otherwise]}


def table() -> dict[str, Any]:
    return dict(MAIN["Resources"]["JobTable"]["Properties"])


def queue(template: dict[str, Any], logical_id: str = "JobQueue") -> dict[str, Any]:
    return dict(template["Resources"][logical_id]["Properties"])


def statements(template: dict[str, Any], policy: str) -> list[dict[str, Any]]:
    return list(template["Resources"][policy]["Properties"]["PolicyDocument"]["Statement"])


def actions(template: dict[str, Any], policy: str) -> set[str]:
    return {a for statement in statements(template, policy) for a in _listed(statement["Action"])}


# -- the table -----------------------------------------------------------------------------


def test_table_keys_match_the_items_the_store_writes() -> None:
    item = item_from_job(sample_job(), None, DEFAULT_SHARDS)
    props = table()
    keep, drop = props["AttributeDefinitions"]["Fn::If"][1:]
    kept, dropped = props["GlobalSecondaryIndexes"]["Fn::If"][1:]
    assert props["AttributeDefinitions"]["Fn::If"][0] == "KeepStatusIndex"
    assert props["GlobalSecondaryIndexes"]["Fn::If"][0] == "KeepStatusIndex"
    assert props["KeySchema"] == [
        {"AttributeName": name, "KeyType": "HASH"} for name in job_key("x")
    ]
    # Either way the current index is there, as the store writes and reads it.
    assert kept[0] == dropped[0]
    (index,) = dropped
    assert index["IndexName"] == INDEX
    assert [k["KeyType"] for k in index["KeySchema"]] == ["HASH", "RANGE"]
    assert index["Projection"] == {
        "ProjectionType": "INCLUDE",
        "NonKeyAttributes": list(INDEX_PROJECTION),
    }
    keys = {k["AttributeName"] for k in props["KeySchema"] + index["KeySchema"]}
    defined = {d["AttributeName"]: d["AttributeType"] for d in drop}
    assert set(defined) == keys  # DynamoDB refuses definitions of non-key attributes
    assert {name: next(iter(item[name])) for name in keys} == defined
    # Kept, the previous layout's index on the keys its records carry.
    (previous,) = kept[1:]
    assert previous["IndexName"] == LEGACY_INDEX
    assert previous["Projection"] == {"ProjectionType": "ALL"}
    legacy_keys = {k["AttributeName"] for k in previous["KeySchema"]}
    assert {d["AttributeName"] for d in keep} == keys | legacy_keys == keys | {"gsi_pk", "gsi_sk"}


def test_table_is_on_demand_with_ttl_pitr_and_encryption() -> None:
    props = table()
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["TimeToLiveSpecification"] == {"AttributeName": TTL_ATTRIBUTE, "Enabled": True}
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    # AWS managed key as before, the stack's customer-managed key when it has one.
    assert props["SSESpecification"] == {
        "SSEEnabled": True,
        "SSEType": with_key("KMS", NO_VALUE),
        "KMSMasterKeyId": with_key({"Ref": "KmsKeyArn"}, NO_VALUE),
    }


def test_table_outlives_its_stack() -> None:
    resource = MAIN["Resources"]["JobTable"]
    assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == ("Retain", "Retain")


def test_table_has_deletion_protection_unless_turned_off() -> None:
    assert table()["DeletionProtectionEnabled"] == {"Ref": "DeletionProtectionEnabled"}
    parameter = MAIN["Parameters"]["DeletionProtectionEnabled"]
    assert (parameter["Default"], parameter["AllowedValues"]) == ("true", ["true", "false"])


def test_table_keeps_its_generated_name() -> None:
    """Naming the table would replace the unnamed table of every stack made before."""
    assert "TableName" not in table()


@BY_NAME
def test_the_stack_policy_keeps_every_table(name: str, template: dict[str, Any]) -> None:
    tables = set(resources(template, "AWS::DynamoDB::Table"))
    assert set(PROTECTED[name]) == tables
    policy = stack_policy(name)
    if not tables:
        assert policy is None
        return
    assert policy is not None
    allow, deny = json.loads(policy)["Statement"]
    assert allow == {"Effect": "Allow", "Principal": "*", "Action": "Update:*", "Resource": "*"}
    assert deny == {
        "Effect": "Deny",
        "Principal": "*",
        "Action": ["Update:Replace", "Update:Delete"],
        "Resource": [f"LogicalResourceId/{logical_id}" for logical_id in sorted(tables)],
    }


# -- the queues ----------------------------------------------------------------------------


@BOTH
def test_queues_are_encrypted_with_an_explicit_size_limit(template: dict[str, Any]) -> None:
    for logical_id in ("JobQueue", "PriorityLaneQueue", "DeadLetterQueue"):
        props = queue(template, logical_id)
        # SQS-managed encryption as before, the stack's customer-managed key when it has one.
        assert props["SqsManagedSseEnabled"] == with_key(NO_VALUE, True)
        assert props["KmsMasterKeyId"] == with_key({"Ref": "KmsKeyArn"}, NO_VALUE)
        assert MAX_BODY_BYTES <= props["MaximumMessageSize"] <= 262_144


@BOTH
def test_the_kms_key_is_optional(template: dict[str, Any]) -> None:
    parameter = template["Parameters"]["KmsKeyArn"]
    assert parameter["Default"] == ""
    assert template["Conditions"]["HasKmsKey"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "KmsKeyArn"}, ""]}]
    }
    pattern = parameter["AllowedPattern"]
    assert pattern.startswith("^(arn:[a-z-]+:kms:") and pattern.endswith(":key/[a-zA-Z0-9-]+)?$")


@BOTH
def test_every_queue_refuses_requests_without_tls(template: dict[str, Any]) -> None:
    queues = set(resources(template, "AWS::SQS::Queue"))
    policies = resources(template, "AWS::SQS::QueuePolicy").values()
    covered = {}
    for policy in policies:
        props = policy["Properties"]
        [target] = props["Queues"]
        [statement] = props["PolicyDocument"]["Statement"]
        covered[target["Ref"]] = statement
    assert set(covered) == queues == {"JobQueue", "PriorityLaneQueue", "DeadLetterQueue"}
    for logical_id, statement in covered.items():
        assert statement == {
            "Sid": "DenyWithoutTls",
            "Effect": "Deny",
            "Principal": "*",
            "Action": "sqs:*",
            "Resource": {"Fn::GetAtt": [logical_id, "Arn"]},
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }


@BOTH
def test_job_queue_long_polls_and_redrives_to_its_dlq(template: dict[str, Any]) -> None:
    props = queue(template)
    assert props["ReceiveMessageWaitTimeSeconds"] == 20
    assert props["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": ["DeadLetterQueue", "Arn"]},
        "maxReceiveCount": {"Ref": "MaxReceiveCount"},
    }
    assert template["Parameters"]["MaxReceiveCount"]["Default"] == 10


@BOTH
def test_dlq_accepts_redrives_from_its_job_queue_and_lane_only(template: dict[str, Any]) -> None:
    allow = queue(template, "DeadLetterQueue")["RedriveAllowPolicy"]
    assert allow["redrivePermission"] == "byQueue"
    source, lane = allow["sourceQueueArns"]
    job_queue_name, suffix = queue(template)["QueueName"]["Fn::Sub"]
    arn, arn_suffix = source["Fn::Sub"]
    assert arn.endswith(f":{job_queue_name}") and arn_suffix == suffix
    assert arn.startswith("arn:${AWS::Partition}:sqs:${AWS::Region}:")
    lane_name = queue(template, "PriorityLaneQueue")["QueueName"]["Fn::Sub"]
    condition, lane_arn, absent = lane["Fn::If"]
    assert (condition, absent) == ("HasPriorityLane", NO_VALUE)
    assert lane_arn["Fn::Sub"] == arn.replace(job_queue_name, lane_name)
    # The lane redrives to the same DLQ, after as many receives as the job queue.
    assert queue(template, "PriorityLaneQueue")["RedrivePolicy"] == queue(template)["RedrivePolicy"]


@BOTH
def test_fifo_makes_both_queues_fifo_with_names_sqs_accepts(template: dict[str, Any]) -> None:
    assert template["Parameters"]["FifoQueue"]["Default"] == "false"
    fifo_suffix = {"Suffix": {"Fn::If": ["IsFifo", ".fifo", ""]}}
    for name in ("JobQueue", "DeadLetterQueue"):
        properties = queue(template, name)
        assert properties["QueueName"]["Fn::Sub"][0].endswith("${Suffix}")
        assert properties["QueueName"]["Fn::Sub"][1] == fifo_suffix
        assert properties["FifoQueue"] == {"Fn::If": ["IsFifo", True, {"Ref": "AWS::NoValue"}]}
        # The store sends a deduplication id with every message.
        assert properties["ContentBasedDeduplication"] == {
            "Fn::If": ["IsFifo", False, {"Ref": "AWS::NoValue"}]
        }


@BOTH
def test_dlq_keeps_messages_longer_than_the_job_queue_can(template: dict[str, Any]) -> None:
    # A standard DLQ keeps each message's original enqueue time.
    assert queue(template, "DeadLetterQueue")["MessageRetentionPeriod"] == DLQ_RETENTION
    assert queue(template)["MessageRetentionPeriod"] == {"Ref": "MessageRetentionPeriod"}
    retention = template["Parameters"]["MessageRetentionPeriod"]
    assert retention["Default"] == 345_600
    assert retention["MaxValue"] < DLQ_RETENTION


@BOTH
def test_job_queue_retention_outlasts_the_longest_hide(template: dict[str, Any]) -> None:
    """A message hidden for SQS's longest visibility timeout must come back before the
    margin the store keeps before retention; a shorter retention drops hidden jobs."""
    retention = template["Parameters"]["MessageRetentionPeriod"]
    assert retention["MinValue"] == RETENTION_MARGIN + MAX_VISIBILITY == 46_800
    assert retention["MinValue"] <= retention["Default"]


@BOTH
def test_dlq_alarm_fires_on_any_visible_message(template: dict[str, Any]) -> None:
    props = template["Resources"]["DeadLetterAlarm"]["Properties"]
    assert props["Namespace"] == "AWS/SQS"
    assert props["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert props["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": ["DeadLetterQueue", "QueueName"]}}
    ]
    assert (props["ComparisonOperator"], props["Threshold"]) == ("GreaterThanThreshold", 0)


@BOTH
def test_job_queue_alarm_fires_on_a_message_waiting_too_long(template: dict[str, Any]) -> None:
    props = template["Resources"]["OldestMessageAlarm"]["Properties"]
    assert props["Namespace"] == "AWS/SQS"
    assert (props["MetricName"], props["Statistic"]) == ("ApproximateAgeOfOldestMessage", "Maximum")
    assert props["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": ["JobQueue", "QueueName"]}}
    ]
    assert props["ComparisonOperator"] == "GreaterThanThreshold"
    assert props["Threshold"] == {"Ref": "OldestMessageAgeThreshold"}
    threshold = template["Parameters"]["OldestMessageAgeThreshold"]
    assert (threshold["Type"], threshold["Default"]) == ("Number", 3600)
    assert threshold["MinValue"] >= props["Period"]  # one period holds one data point


@BOTH
def test_an_alarm_fires_when_jobs_wait_and_no_worker_receives_them(
    template: dict[str, Any],
) -> None:
    """Ten minutes of visible messages with no receive: no worker alive, or all stuck."""
    props = template["Resources"]["NoWorkerAlarm"]["Properties"]
    metrics = {metric["Id"]: metric for metric in props["Metrics"]}
    [shown] = [metric for metric in props["Metrics"] if metric["ReturnData"]]
    assert shown["Expression"] == "IF(FILL(received, 0) == 0, visible, 0)"
    job_queue = [{"Name": "QueueName", "Value": {"Fn::GetAtt": ["JobQueue", "QueueName"]}}]
    for name, metric, stat in (
        ("visible", "ApproximateNumberOfMessagesVisible", "Minimum"),  # all period long
        ("received", "NumberOfMessagesReceived", "Sum"),
    ):
        stat_of = metrics[name]["MetricStat"]
        assert stat_of["Metric"]["Namespace"] == "AWS/SQS"
        assert (stat_of["Metric"]["MetricName"], stat_of["Stat"]) == (metric, stat)
        assert stat_of["Metric"]["Dimensions"] == job_queue
        assert stat_of["Period"] == 300
    assert (props["EvaluationPeriods"], props["DatapointsToAlarm"]) == (2, 2)
    assert (props["ComparisonOperator"], props["Threshold"]) == ("GreaterThanThreshold", 0)


@BOTH
def test_every_alarm_notifies_the_alarm_topic(template: dict[str, Any]) -> None:
    alarms = resources(template, "AWS::CloudWatch::Alarm")
    assert set(alarms) == {
        "DeadLetterAlarm",
        "OldestMessageAlarm",
        "NoWorkerAlarm",
        "FailureRateAlarm",  # these two on the workers' run metrics (test_metric_alarms.py)
        "QueueWaitAlarm",
    }
    for alarm in alarms.values():
        props = alarm["Properties"]
        assert (props["AlarmActions"], props["OKActions"]) == (NOTIFY, NOTIFY)
        assert props["TreatMissingData"] == "notBreaching"
    assert template["Parameters"]["AlarmTopicArn"]["Default"] == ""


# -- tags ----------------------------------------------------------------------------------


@BOTH
def test_stack_tags_reach_every_resource_that_takes_tags(template: dict[str, Any]) -> None:
    """CloudFormation copies stack tags to each resource whose type takes tags; the
    README names the types that cannot, and no resource sets tags of its own."""
    untaggable = set()
    for resource in template["Resources"].values():
        schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", resource["Type"])
        if not schema.schema["tagging"]["taggable"]:
            untaggable.add(resource["Type"])
        assert "Tags" not in resource["Properties"]
    assert untaggable == UNTAGGABLE


# -- the optional Lambda worker ------------------------------------------------------------


@BOTH
def test_lambda_mapping_exists_only_with_a_function(template: dict[str, Any]) -> None:
    (mapping,) = resources(template, "AWS::Lambda::EventSourceMapping").values()
    assert mapping["Condition"] == "HasLambdaWorker"
    assert template["Conditions"]["HasLambdaWorker"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "WorkerFunctionArn"}, ""]}]
    }
    assert template["Parameters"]["WorkerFunctionArn"]["Default"] == ""
    props = mapping["Properties"]
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["EventSourceArn"] == {"Fn::GetAtt": ["JobQueue", "Arn"]}
    assert props["BatchSize"] == {"Ref": "BatchSize"}


@BOTH
def test_scheduled_functions_exist_only_with_their_function(template: dict[str, Any]) -> None:
    """The reconciler and the cron function: a rule invoking the function, and its grant."""
    schedules = {
        "Reconcile": ("HasReconciler", "ReconcileFunctionArn", {"Ref": "ReconcileSchedule"}),
        "Cron": ("HasCronFunction", "CronFunctionArn", "rate(1 minute)"),
    }
    rules = resources(template, "AWS::Events::Rule")
    grants = resources(template, "AWS::Lambda::Permission")
    assert set(rules) == {f"{name}Rule" for name in schedules}
    assert set(grants) == {f"{name}Permission" for name in schedules}
    for name, (condition, function, expression) in schedules.items():
        assert template["Conditions"][condition] == {
            "Fn::Not": [{"Fn::Equals": [{"Ref": function}, ""]}]
        }
        assert template["Parameters"][function]["Default"] == ""
        rule, grant = rules[f"{name}Rule"], grants[f"{name}Permission"]
        assert rule["Condition"] == grant["Condition"] == condition
        assert rule["Properties"]["ScheduleExpression"] == expression
        assert [t["Arn"] for t in rule["Properties"]["Targets"]] == [{"Ref": function}]
        assert grant["Properties"] == {
            "Action": "lambda:InvokeFunction",
            "FunctionName": {"Ref": function},
            "Principal": "events.amazonaws.com",
            "SourceArn": {"Fn::GetAtt": [f"{name}Rule", "Arn"]},
        }


@BOTH
def test_lambda_queue_visibility_is_six_times_the_function_timeout(
    template: dict[str, Any],
) -> None:
    assert queue(template)["VisibilityTimeout"] == {
        "Fn::If": [
            "HasLambdaWorker",
            {"Fn::FindInMap": ["LambdaVisibility", {"Ref": "LambdaTimeout"}, "Seconds"]},
            {"Ref": "VisibilityTimeout"},
        ]
    }
    timeouts = template["Parameters"]["LambdaTimeout"]["AllowedValues"]
    visibility = template["Mappings"]["LambdaVisibility"]
    assert set(visibility) == {str(t) for t in timeouts}
    assert max(timeouts) == 900  # Lambda's longest timeout
    for timeout in timeouts:
        assert 6 * timeout <= visibility[str(timeout)]["Seconds"] <= MAX_VISIBILITY


# -- IAM -----------------------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize("policy", list(POLICIES))
def test_each_role_gets_its_actions(template: dict[str, Any], policy: str) -> None:
    assert actions(template, policy) == POLICIES[policy]


@BOTH
def test_the_producers_updates_touch_only_what_a_resend_and_a_link_write_and_read(
    template: dict[str, Any],
) -> None:
    """A record's key with ``resent_at`` and ``updated_at`` (a re-send), or with
    ``children`` and the ``status`` its condition reads (a child's link onto a parent):
    one statement each, so neither lets an update name the other's attributes."""
    updates = [
        s for s in statements(template, "ProducerPolicy") if "UpdateItem" in str(s["Action"])
    ]
    assert [update["Action"] for update in updates] == ["dynamodb:UpdateItem"] * 3
    assert [update["Condition"] for update in updates[:2]] == [
        {
            "ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["job#*"]},
            "ForAllValues:StringEquals": {"dynamodb:Attributes": [*job_key("x"), *named]},
            "StringEquals": {"dynamodb:ReturnValues": "NONE"},
        }
        for named in ([RESENT_AT, "updated_at"], [CHILDREN, "status"])
    ]
    # A debounced enqueue's write of its burst's slot, which comes back whole: a slot
    # holds no record's attribute, and no other kind of item is named.
    assert updates[2]["Condition"] == {
        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["debounce#*"]},
        "ForAllValues:StringEquals": {
            "dynamodb:Attributes": [
                "pk",
                "job_id",
                "created_at",
                "payload",
                "run_at",
                "updated_at",
                "expires_at",
                "v",
            ]
        },
        "StringEquals": {"dynamodb:ReturnValues": "ALL_NEW"},
    }


# The kinds of item each role may write, by partition key (dynamodb:LeadingKeys), in
# each statement that grants the action.
KINDS = ["job#*", "body#*", "limit#*", "worker#*", "batch#*", "debounce#*"]
WRITES = {
    "ProducerPolicy": {
        "dynamodb:PutItem": [["job#*", "body#*", "batch#*", "debounce#*"]],
        # a re-send, a child's link, a debounced enqueue's slot
        "dynamodb:UpdateItem": [["job#*"], ["job#*"], ["debounce#*"]],
    },
    "WorkerPolicy": {"dynamodb:PutItem": [KINDS], "dynamodb:UpdateItem": [KINDS]},
    "ReaderPolicy": {},
    "OperatorPolicy": {
        "dynamodb:UpdateItem": [["job#*", "body#*", "batch#*", "control#*", "debounce#*"]]
    },
}
ITEM_WRITES = {
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
}


@BOTH
@pytest.mark.parametrize("policy", list(POLICIES))
def test_each_role_writes_only_the_kinds_of_item_it_needs(
    template: dict[str, Any], policy: str
) -> None:
    found: dict[str, list[list[str]]] = {}
    for statement in statements(template, policy):
        for action in ITEM_WRITES.intersection(_listed(statement["Action"])):
            condition = statement["Condition"]["ForAllValues:StringLike"]
            found.setdefault(action, []).append(condition["dynamodb:LeadingKeys"])
    assert found == WRITES[policy]


def test_each_kind_s_pattern_matches_its_items_keys_and_no_other_kind_s() -> None:
    keys = {
        ("job#*", job_pk("3f9c2a")),
        ("body#*", f"{BODY_PREFIX}3f9c2a#9d41e07b5c2a8f16"),  # a body's key: {id}#{nonce}
        ("limit#*", slot_pk("concurrency/mail.send/acme", 7)),
        ("worker#*", presence_pk("worker-3f9c2a7d41e0")),
        ("batch#*", root_key("3f9c2a")["pk"]["S"]),  # a batch's root
        ("batch#*", shard_key("3f9c2a", 7)["pk"]["S"]),  # and one of its shards
    }
    assert {(p, k) for p in KINDS for _, k in keys if like(p, k)} == keys


@BOTH
@pytest.mark.parametrize("policy", list(POLICIES))
def test_policies_name_their_resources(template: dict[str, Any], policy: str) -> None:
    """Queries name the index, other item calls the table, SQS calls the queues."""
    for statement in statements(template, policy):
        assert statement["Effect"] == "Allow"
        listed = statement["Resource"]
        for resource in listed if isinstance(listed, list) else [listed]:
            assert resource in RESOURCES
            for action in _listed(statement["Action"]):
                assert resource_kind(resource) == ACTION_KINDS.get(action, action.split(":")[0])


ACTION_KINDS = {"dynamodb:Query": "index", "cloudformation:DescribeStacks": "stack"}


def resource_kind(resource: dict[str, Any]) -> str:
    if "Fn::Sub" in resource:
        indexes = (f"/index/{INDEX}", f"/index/{LEGACY_INDEX}")
        return "index" if resource["Fn::Sub"].endswith(indexes) else "dynamodb"
    if "Fn::If" in resource:  # the priority lane's ARN, or the job queue's
        return resource_kind(resource["Fn::If"][1])
    return "sqs" if "Fn::GetAtt" in resource else "stack"


def _listed(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


# -- outputs and the two templates ---------------------------------------------------------


@BOTH
def test_outputs(template: dict[str, Any]) -> None:
    outputs = template["Outputs"]
    assert set(outputs) == {
        "TableName",
        "QueueUrls",
        "IndexShards",
        "RecordFormat",
        "DeadLetterQueueUrls",
        "PriorityLaneUrls",
        "QueueArn",
        "DeadLetterQueueArn",
        "ProducerPolicyArn",
        "WorkerPolicyArn",
        "ReaderPolicyArn",
        "OperatorPolicyArn",
        "KeyUsePolicyArn",
        "EventSourceMappingId",
    }
    assert outputs["QueueUrls"]["Value"] == {"Fn::Sub": "${QueueName}=${JobQueue}"}
    assert outputs["DeadLetterQueueUrls"]["Value"] == {"Fn::Sub": "${QueueName}=${DeadLetterQueue}"}
    assert outputs["EventSourceMappingId"]["Condition"] == "HasLambdaWorker"
    assert outputs["IndexShards"]["Value"] == {"Ref": "IndexShards"}
    assert outputs["RecordFormat"]["Value"] == {"Ref": "RecordFormat"}
    assert outputs["KeyUsePolicyArn"]["Condition"] == "HasKmsKey"


@BOTH
def test_new_stacks_write_the_current_record_format(template: dict[str, Any]) -> None:
    parameter = template["Parameters"]["RecordFormat"]
    assert (parameter["Default"], parameter["AllowedValues"]) == ("3", ["1", "2", "3"])


@BOTH
def test_a_customer_managed_key_comes_with_a_policy_to_use_it(template: dict[str, Any]) -> None:
    """SQS and DynamoDB use the key on the caller's behalf: each role needs it too."""
    policy = template["Resources"]["KeyUsePolicy"]
    assert policy["Condition"] == "HasKmsKey"
    [statement] = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Resource"] == {"Ref": "KmsKeyArn"}
    assert set(statement["Action"]) == {
        "kms:Decrypt",
        "kms:DescribeKey",
        "kms:Encrypt",
        "kms:GenerateDataKey",
    }
    services = statement["Condition"]["StringEquals"]["kms:ViaService"]
    assert [s["Fn::Sub"].split(".")[0] for s in services] == ["sqs", "dynamodb"]


@BOTH
def test_no_output_refers_to_a_resource_the_emulator_ignores(template: dict[str, Any]) -> None:
    # An output on an alarm makes the emulator's create_stack fail with HTTP 500.
    ignored = set(resources(template, "AWS::CloudWatch::Alarm"))
    assert ignored
    assert not ignored & references(template["Outputs"])


def test_queue_template_is_the_main_one_without_the_table() -> None:
    """Everything but the table must be identical, so the two templates cannot drift."""
    expected = _renamed(MAIN, "JobTable", "TableName")
    del expected["Resources"]["JobTable"]
    shared = {k: v for k, v in MAIN["Parameters"].items() if k not in TABLE_PARAMETERS}
    expected["Parameters"] = {"TableName": QUEUE["Parameters"]["TableName"], **shared}
    for condition in TABLE_CONDITIONS:
        del expected["Conditions"][condition]
    for section in ("Parameters", "Conditions", "Mappings", "Resources", "Outputs"):
        assert QUEUE[section] == expected[section], section
    assert set(QUEUE) == set(MAIN)
    assert references(QUEUE) - set(QUEUE["Parameters"]) - set(QUEUE["Resources"]) == {
        "AWS::Partition",
        "AWS::Region",
        "AWS::AccountId",
        "AWS::StackName",
        "AWS::StackId",
        "AWS::NoValue",
    }


def _renamed(node: Any, old: str, new: str) -> Any:
    """``node`` with every reference to ``old`` (Ref, GetAtt, ${...}) pointing at ``new``."""
    if isinstance(node, list):
        return [_renamed(item, old, new) for item in node]
    if isinstance(node, dict):
        if node.get("Ref") == old:
            return {"Ref": new}
        return {key: _renamed(value, old, new) for key, value in node.items()}
    if isinstance(node, str):
        return node.replace("${" + old + "}", "${" + new + "}")
    return node
