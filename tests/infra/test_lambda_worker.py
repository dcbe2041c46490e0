"""The Lambda worker template (``sqsjobs-lambda-worker.yaml``), deployed into the emulator.

A stack of ``sqsjobs.yaml`` is deployed first (its visibility timeout six times the
function's), a small zip uploaded to the emulator's S3, then the worker stack from that
stack's outputs, with the reconciler and the cron function on. The emulator creates the
functions, their roles, log groups, schedules and the event source mapping, and these
tests read them back.

What the emulator does not model, checked on the template instead: a function's
``Architectures`` (it reports ``x86_64`` whatever the template says) and ``LoggingConfig``
(it keeps no log group of a function); what ``ReservedConcurrentExecutions`` and the
mapping's ``MaximumConcurrency`` do (it keeps both values and enforces neither); the
``Rules`` section (it ignores it, so the rule that the code comes from one place is
evaluated here); a role's ``ManagedPolicyArns`` (it attaches none, so the worker
policy is read from the main stack and added to the role's inline statements for the IAM
checks; and it hands an inline policy back as the text of a Python dict, not JSON); a
Number parameter in a function's environment (it keeps a number, AWS text); and
invocation: it cannot run a function without Docker, and a message sent to a queue with
a mapping makes it fail an invocation and count a receive, so nothing is sent to this
stack's queue. IAM is evaluated with ``tests/infra/iam.py``, as the emulator enforces none.
"""

from __future__ import annotations

import ast
import io
import time
import uuid
import zipfile
from dataclasses import dataclass
from typing import Any

import boto3  # type: ignore[import-untyped]
import pytest

from sqsjobs.aws.flows.resend import mark_resent
from sqsjobs.aws.wire import dynamo, slots
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS, IndexedTable
from sqsjobs.aws.wire.items import Stored, item_from_job, stored_from_item
from sqsjobs.aws.wire.protocol import Call
from sqsjobs.infra import deploy_stack
from sqsjobs.infra._archive import ENTRY_POINTS, HANDLER_MODULE

from .calls import Deployed
from .iam import Request, allowed
from .support import load_template, resources, sample_job

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch.+Alarm:UserWarning")

NAME = "sqsjobs-lambda-worker"
TIMEOUT = 60
SETTINGS = {
    "Runtime": "python3.13",
    "Architecture": "arm64",
    "Timeout": str(TIMEOUT),
    "MemorySize": "1024",
    "ReservedConcurrency": "20",
    "BatchSize": "5",
    "MaximumBatchingWindowInSeconds": "2",
    "MaximumConcurrency": "7",
    "LogRetentionInDays": "14",
    "MetricsNamespace": "jobs/prod",
    "EnableReconciler": "true",
    "EnableCron": "true",
}
FROM_MAIN = (
    "TableName",
    "QueueUrls",
    "QueueArn",
    "DeadLetterQueueUrls",
    "IndexShards",
    "RecordFormat",
    "WorkerPolicyArn",
    "ProducerPolicyArn",
)


@dataclass(frozen=True)
class Stacks:
    main: Deployed
    worker: dict[str, str]  # the worker stack's outputs


def client(service: str, endpoint: str) -> Any:
    return boto3.session.Session().client(service, endpoint_url=endpoint)


def small_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{HANDLER_MODULE}.py", "def handler(event, context):\n    return {}\n")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def stacks(aws_endpoint: str) -> Stacks:
    name = f"t{uuid.uuid4().hex[:12]}"
    visibility = str(6 * TIMEOUT)  # sqsjobs.yaml's LambdaVisibility for this timeout
    outputs = deploy_stack(
        name, endpoint_url=aws_endpoint, parameters={"VisibilityTimeout": visibility}
    )
    (described,) = client("cloudformation", aws_endpoint).describe_stacks(StackName=name)["Stacks"]
    main = Deployed(name, dict(outputs), described["StackId"], aws_endpoint)
    bucket = f"{name}-code"
    s3 = client("s3", aws_endpoint)
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="worker/1.zip", Body=small_zip())
    parameters = {
        **SETTINGS,
        **{key: outputs[key] for key in FROM_MAIN},
        "CodeS3Bucket": bucket,
        "CodeS3Key": "worker/1.zip",
    }
    worker = deploy_stack(
        f"{name}-worker", template=NAME, endpoint_url=aws_endpoint, parameters=parameters
    )
    return Stacks(main, dict(worker))


def configuration(stacks: Stacks, function: str) -> dict[str, Any]:
    reply = client("lambda", stacks.main.endpoint).get_function_configuration(FunctionName=function)
    return dict(reply)


def test_the_outputs_are_the_ones_the_template_declares(stacks: Stacks) -> None:
    assert set(stacks.worker) == set(load_template(NAME)["Outputs"])  # reconciler and cron on
    assert stacks.worker["WorkerFunctionArn"].endswith(
        f":function:{stacks.worker['WorkerFunctionName']}"
    )
    assert stacks.worker["WorkerLogGroupName"] == f"/aws/lambda/{stacks.main.name}-worker/worker"


def test_the_worker_function_runs_the_package_s_handler_with_the_store_s_environment(
    stacks: Stacks,
) -> None:
    found = configuration(stacks, stacks.worker["WorkerFunctionName"])
    assert (found["Runtime"], found["Handler"]) == ("python3.13", f"{HANDLER_MODULE}.handler")
    assert (found["Timeout"], found["MemorySize"], found["PackageType"]) == (TIMEOUT, 1024, "Zip")
    assert found["Role"] == stacks.worker["WorkerRoleArn"]
    main = stacks.main.outputs
    # (The emulator keeps a Number parameter as a number; AWS passes text.)
    variables = {name: str(value) for name, value in found["Environment"]["Variables"].items()}
    assert variables == {
        "SQSJOBS_TABLE": main["TableName"],
        "SQSJOBS_QUEUES": main["QueueUrls"],
        "SQSJOBS_DEAD_LETTER_QUEUES": main["DeadLetterQueueUrls"],
        "SQSJOBS_INDEX_SHARDS": main["IndexShards"],
        "SQSJOBS_RECORD_FORMAT": main["RecordFormat"],
        "SQSJOBS_METRICS_NAMESPACE": "jobs/prod",
    }
    assert found["CodeSize"] == len(small_zip())  # read from the bucket
    lambda_ = client("lambda", stacks.main.endpoint)
    reserved = lambda_.get_function_concurrency(FunctionName=stacks.worker["WorkerFunctionName"])
    assert reserved["ReservedConcurrentExecutions"] == 20
    # Not modelled: the emulator reports x86_64 whatever the template asks (see the docs).
    assert found["Architectures"] in (["arm64"], ["x86_64"])


def test_the_stack_maps_the_job_queue_to_the_worker_with_batch_item_failures(
    stacks: Stacks,
) -> None:
    lambda_ = client("lambda", stacks.main.endpoint)
    queue = stacks.main.outputs["QueueArn"]
    (mapping,) = lambda_.list_event_source_mappings(EventSourceArn=queue)["EventSourceMappings"]
    assert mapping["UUID"] == stacks.worker["EventSourceMappingId"]
    assert mapping["FunctionArn"] == stacks.worker["WorkerFunctionArn"]
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert (mapping["BatchSize"], mapping["MaximumBatchingWindowInSeconds"]) == (5, 2)
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": 7}
    assert mapping["State"] == "Enabled"


def test_the_queue_hides_a_message_six_times_the_function_timeout(stacks: Stacks) -> None:
    url = stacks.main.queue_url
    sqs = client("sqs", stacks.main.endpoint)
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
    assert int(attributes["Attributes"]["VisibilityTimeout"]) == 6 * TIMEOUT


def test_the_reconciler_and_cron_functions_run_the_same_code_on_their_schedules(
    stacks: Stacks,
) -> None:
    endpoint = stacks.main.endpoint
    events = client("events", endpoint)
    expected = {
        "ReconcileFunctionArn": (
            "reconcile",
            300,
            stacks.worker["WorkerRoleArn"],
            "rate(5 minutes)",
        ),
        "CronFunctionArn": ("cron", 60, stacks.worker["CronRoleArn"], "rate(1 minute)"),
    }
    for output, (entry, timeout, role, schedule) in expected.items():
        arn = stacks.worker[output]
        found = configuration(stacks, arn)
        assert (found["Handler"], found["Timeout"], found["Role"]) == (
            f"{HANDLER_MODULE}.{entry}",
            timeout,
            role,
        )
        assert (
            found["Environment"]
            == configuration(stacks, stacks.worker["WorkerFunctionArn"])["Environment"]
        )
        rules = events.list_rule_names_by_target(TargetArn=arn)["RuleNames"]
        (rule,) = [events.describe_rule(Name=name) for name in rules]
        assert rule["ScheduleExpression"] == schedule
        policy = client("lambda", endpoint).get_policy(FunctionName=arn)["Policy"]
        assert "events.amazonaws.com" in policy and rule["Arn"] in policy


def test_each_function_logs_to_its_own_group_with_the_retention_given(stacks: Stacks) -> None:
    logs = client("logs", stacks.main.endpoint)
    prefix = f"/aws/lambda/{stacks.main.name}-worker/"
    groups = logs.describe_log_groups(logGroupNamePrefix=prefix)["logGroups"]
    assert {g["logGroupName"].removeprefix(prefix): g["retentionInDays"] for g in groups} == {
        "worker": 14,
        "reconcile": 14,
        "cron": 14,
    }
    template = load_template(NAME)["Resources"]
    for function, group in [
        ("WorkerFunction", "WorkerLogGroup"),
        ("ReconcileFunction", "ReconcileLogGroup"),
        ("CronFunction", "CronLogGroup"),
    ]:
        config = template[function]["Properties"]["LoggingConfig"]
        assert config == {"LogGroup": {"Ref": group}, "LogFormat": "Text"}


# -- the roles, as IAM would evaluate them ----------------------------------------------------


def inline_statements(stacks: Stacks, role_arn: str) -> list[dict[str, Any]]:
    iam = client("iam", stacks.main.endpoint)
    role = role_arn.rsplit("/", 1)[1]
    names = iam.list_role_policies(RoleName=role)["PolicyNames"]
    assert names == ["OwnLogs"]
    document = iam.get_role_policy(RoleName=role, PolicyName="OwnLogs")["PolicyDocument"]
    if isinstance(document, str):  # the emulator keeps a stack's inline policy as Python's repr
        document = ast.literal_eval(document)
    return list(document["Statement"])


def worker_statements(stacks: Stacks) -> list[dict[str, Any]]:
    """What the worker role may do: the worker policy it is given, and its own logs."""
    return stacks.main.statements("Worker") + inline_statements(
        stacks, stacks.worker["WorkerRoleArn"]
    )


def may(stacks: Stacks, call: Call) -> bool:
    return allowed(worker_statements(stacks), stacks.main.request(stacks.main.sent(call)))


def sqs_call(operation: str, url: str) -> Call:
    return Call("sqs", operation, {"QueueUrl": url})


def log_request(stacks: Stacks, action: str, group: str) -> Request:
    _, partition, _, region, account, _ = stacks.main.outputs["QueueArn"].split(":")
    arn = f"arn:{partition}:logs:{region}:{account}:log-group:{group}:log-stream:2030/01/01/x"
    return Request(f"logs:{action}", arn, {})


def test_the_worker_role_is_given_the_worker_policy_and_its_logs_only(stacks: Stacks) -> None:
    role = load_template(NAME)["Resources"]["WorkerRole"]["Properties"]
    assert role["ManagedPolicyArns"] == [
        {"Ref": "WorkerPolicyArn"},
        {"Fn::If": ["HasKeyUsePolicy", {"Ref": "KeyUsePolicyArn"}, {"Ref": "AWS::NoValue"}]},
    ]
    (statement,) = inline_statements(stacks, stacks.worker["WorkerRoleArn"])
    assert sorted(statement["Action"]) == ["logs:CreateLogStream", "logs:PutLogEvents"]
    _, partition, _, region, account, _ = stacks.main.outputs["QueueArn"].split(":")
    groups = [f"/aws/lambda/{stacks.main.name}-worker/{n}" for n in ("worker", "reconcile")]
    assert statement["Resource"] == [
        f"arn:{partition}:logs:{region}:{account}:log-group:{group}:*" for group in groups
    ]
    cron = load_template(NAME)["Resources"]["CronRole"]["Properties"]["ManagedPolicyArns"]
    assert cron[0] == {"Ref": "ProducerPolicyArn"}


def test_the_worker_role_may_do_what_a_worker_does(stacks: Stacks) -> None:
    table = stacks.main.table
    indexed = IndexedTable(table, DEFAULT_SHARDS)
    job = sample_job(uuid.uuid4().hex)
    now = time.time()
    holder = uuid.uuid4().hex
    work = [
        dynamo.claim(indexed, job.id, "default", "lambda-1", holder, now, 30.0),
        dynamo.put_new(table, item_from_job(job, None, DEFAULT_SHARDS), now),  # a follow-up
        slots.take(table, "concurrency/mail.send", 0, holder, now + 30.0, now),
        mark_resent(table, _stored(job.id), now),  # the reconciler's pass
        sqs_call("receive_message", stacks.main.queue_url),  # the mapping's poller
        sqs_call("delete_message", stacks.main.queue_url),
        sqs_call("change_message_visibility", stacks.main.queue_url),
        sqs_call("send_message", stacks.main.dead_letter_url),  # a dead job to the DLQ
    ]
    assert [may(stacks, call) for call in work] == [True] * len(work)
    statements = worker_statements(stacks)
    group = f"/aws/lambda/{stacks.main.name}-worker/worker"
    for action in ("CreateLogStream", "PutLogEvents"):
        assert allowed(statements, log_request(stacks, action, group))


def test_the_worker_role_may_not_do_what_only_producers_or_operators_may(stacks: Stacks) -> None:
    lane = stacks.main.outputs["PriorityLaneUrls"].partition("=")[2]
    # A handler's urgent follow-up job has a copy on the lane: a worker sends there too.
    assert may(stacks, sqs_call("send_message", lane))
    assert not may(stacks, sqs_call("delete_message", stacks.main.dead_letter_url))  # operators
    assert not may(stacks, sqs_call("purge_queue", stacks.main.queue_url))
    delete = Call(
        "dynamodb", "delete_item", {"TableName": stacks.main.table, "Key": {"pk": {"S": "x"}}}
    )
    assert not may(stacks, delete)
    statements = worker_statements(stacks)
    other = f"/aws/lambda/{stacks.main.name}-other"
    assert not allowed(statements, log_request(stacks, "PutLogEvents", other))
    assert not allowed(statements, log_request(stacks, "CreateLogGroup", other))


def _stored(job_id: str) -> Stored:
    return stored_from_item(item_from_job(sample_job(job_id), None, DEFAULT_SHARDS))


# -- the template itself -------------------------------------------------------------------


def test_the_timeouts_are_the_ones_the_main_stack_has_a_visibility_for() -> None:
    worker = load_template(NAME)
    main = load_template("sqsjobs")
    allowed_timeouts = worker["Parameters"]["Timeout"]["AllowedValues"]
    assert allowed_timeouts == main["Parameters"]["LambdaTimeout"]["AllowedValues"]
    visibility = main["Mappings"]["LambdaVisibility"]
    assert {int(k): v["Seconds"] for k, v in visibility.items()} == {
        t: 6 * t for t in allowed_timeouts
    }


def test_the_functions_run_the_entry_points_the_package_generates() -> None:
    functions = resources(load_template(NAME), "AWS::Lambda::Function")
    handlers = {
        name: function["Properties"]["Handler"]["Fn::If"][2] for name, function in functions.items()
    }
    assert handlers == {
        "WorkerFunction": f"{HANDLER_MODULE}.handler",
        "ReconcileFunction": f"{HANDLER_MODULE}.reconcile",
        "CronFunction": f"{HANDLER_MODULE}.cron",
    }
    assert sorted(h.rpartition(".")[2] for h in handlers.values()) == sorted(ENTRY_POINTS)
    for function in functions.values():
        properties = function["Properties"]
        assert properties["Architectures"] == [{"Ref": "Architecture"}]
        assert properties["ImageConfig"]["Fn::If"][1] == {
            "Command": [properties["Handler"]["Fn::If"][2]]
        }


def test_only_this_stack_maps_the_queue() -> None:
    """The main stack's own mapping stays off: its WorkerFunctionArn defaults to empty."""
    main = load_template("sqsjobs")
    assert main["Parameters"]["WorkerFunctionArn"]["Default"] == ""
    assert main["Resources"]["WorkerEventSourceMapping"]["Condition"] == "HasLambdaWorker"
    assert list(resources(load_template(NAME), "AWS::Lambda::EventSourceMapping")) == [
        "JobQueueMapping"
    ]


@pytest.mark.parametrize(
    ("bucket", "key", "image", "holds"),
    [
        ("code", "w.zip", "", True),
        ("", "", "123456789012.dkr.ecr.us-east-1.amazonaws.com/jobs:1", True),
        ("", "", "", False),
        ("code", "", "", False),
        ("code", "w.zip", "123456789012.dkr.ecr.us-east-1.amazonaws.com/jobs:1", False),
    ],
)
def test_the_code_comes_from_one_place(bucket: str, key: str, image: str, holds: bool) -> None:
    """The ``CodeFromOnePlace`` rule, evaluated on the parameters (the emulator ignores
    ``Rules``; CloudFormation refuses a deploy whose assertion is false)."""
    (assertion,) = load_template(NAME)["Rules"]["CodeFromOnePlace"]["Assertions"]
    values = {"CodeS3Bucket": bucket, "CodeS3Key": key, "ImageUri": image}
    assert evaluate(assertion["Assert"], values) is holds


def evaluate(node: Any, values: dict[str, str]) -> Any:
    """A rule's condition functions (Or, And, Not, Equals, Ref) on parameter values."""
    ((function, argument),) = node.items()
    if function == "Ref":
        return values[argument]
    arguments = [evaluate(a, values) if isinstance(a, dict) else a for a in argument]
    return {
        "Fn::Or": lambda: any(arguments),
        "Fn::And": lambda: all(arguments),
        "Fn::Not": lambda: not arguments[0],
        "Fn::Equals": lambda: arguments[0] == arguments[1],
    }[function]()
