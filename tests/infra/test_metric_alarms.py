"""The alarms and dashboard on the workers' run metrics (EnableMetricAlarms).

They must name exactly what the workers write: the EMF metric names, the namespace the
workers are given (MetricsNamespace = SQSJOBS_METRICS_NAMESPACE) and the per-queue
roll-up (``Queue`` = this stack's QueueName), or they would watch metrics nobody emits.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import boto3
import pytest

from sqsjobs.infra import deploy_stack
from sqsjobs.observe.emf import BY_JOB, OUTCOME_METRICS, QUEUE
from sqsjobs.observe.metrics import DEFAULT_NAMESPACE

from .support import load_template, resources

MAIN = load_template("sqsjobs")
QUEUE_TEMPLATE = load_template("sqsjobs-queue")
BOTH = pytest.mark.parametrize("template", [MAIN, QUEUE_TEMPLATE], ids=["main", "queue"])
EMITTED = {"JobsStarted", "QueueWait", "RunDuration", "ClaimRefused", *OUTCOME_METRICS.values()}
PER_QUEUE = [{"Name": QUEUE, "Value": {"Ref": "QueueName"}}]


@BOTH
def test_metric_alarms_and_dashboard_are_off_unless_enabled(template: dict[str, Any]) -> None:
    parameters = template["Parameters"]
    assert parameters["EnableMetricAlarms"]["Default"] == "false"
    assert parameters["MetricsNamespace"]["Default"] == DEFAULT_NAMESPACE
    assert template["Conditions"]["HasMetricAlarms"] == {
        "Fn::Equals": [{"Ref": "EnableMetricAlarms"}, "true"]
    }
    gated = {"FailureRateAlarm", "QueueWaitAlarm", "JobsDashboard"}
    assert {
        k for k, v in template["Resources"].items() if v.get("Condition") == "HasMetricAlarms"
    } == gated


@BOTH
def test_the_failure_rate_is_failed_runs_over_all_outcomes(template: dict[str, Any]) -> None:
    props = resources(template, "AWS::CloudWatch::Alarm")["FailureRateAlarm"]["Properties"]
    queries = {query["Id"]: query for query in props["Metrics"]}
    assert [q["Id"] for q in props["Metrics"] if q["ReturnData"]] == ["failed_rate"]
    assert queries["total"]["Expression"] == "completed + retried + dead"
    assert "100 * (retried + dead) / total" in queries["failed_rate"]["Expression"]
    for query_id, name in (("completed", "completed"), ("retried", "retried"), ("dead", "dead")):
        stat = queries[query_id]["MetricStat"]
        assert stat["Metric"] == {
            "Namespace": {"Ref": "MetricsNamespace"},
            "MetricName": OUTCOME_METRICS[name],
            "Dimensions": PER_QUEUE,
        }
        assert (stat["Stat"], stat["Period"]) == ("Sum", 300)
    assert props["Threshold"] == {"Ref": "FailureRateThreshold"}
    assert props["ComparisonOperator"] == "GreaterThanThreshold"


@BOTH
def test_the_queue_wait_alarm_watches_its_p95(template: dict[str, Any]) -> None:
    props = resources(template, "AWS::CloudWatch::Alarm")["QueueWaitAlarm"]["Properties"]
    assert (props["Namespace"], props["MetricName"]) == ({"Ref": "MetricsNamespace"}, "QueueWait")
    assert props["Dimensions"] == PER_QUEUE
    assert (props["ExtendedStatistic"], props["Unit"]) == ("p95", "Seconds")
    assert props["Threshold"] == {"Ref": "QueueWaitThreshold"}


def test_the_emf_lines_carry_the_per_queue_roll_up_the_alarms_read() -> None:
    assert [QUEUE] in BY_JOB


@BOTH
def test_the_dashboard_is_valid_json_over_metrics_the_workers_write(
    template: dict[str, Any],
) -> None:
    body = resources(template, "AWS::CloudWatch::Dashboard")["JobsDashboard"]["Properties"]
    text = body["DashboardBody"]["Fn::Sub"]
    values = {
        "QueueName": "emails",
        "AWS::Region": "eu-north-1",
        "MetricsNamespace": "Acme/Jobs",
        "FailureRateThreshold": "10",
        "QueueWaitThreshold": "300",
        "DeadLetterQueue.QueueName": "acme-emails-dlq",
        "JobQueue.QueueName": "acme-emails",
    }
    widgets = json.loads(re.sub(r"\$\{([^}]+)\}", lambda m: values[m[1]], text))["widgets"]
    named: set[str] = set()
    for widget in widgets:
        namespace = None
        for row in widget["properties"]["metrics"]:
            if isinstance(row[0], str) and row[0] != "...":
                namespace = row[0] if row[0] != "." else namespace
                if namespace == "Acme/Jobs":
                    named.add(row[1])
    assert named <= EMITTED
    assert {"JobsCompleted", "JobsRetried", "JobsDead", "QueueWait", "RunDuration"} <= named


@pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch:UserWarning")
def test_a_stack_with_metric_alarms_deploys(aws_endpoint: str) -> None:
    name = f"m{uuid.uuid4().hex[:12]}"
    parameters = {"EnableMetricAlarms": "true", "MetricsNamespace": "Acme/Jobs"}
    outputs = deploy_stack(name, parameters=parameters, endpoint_url=aws_endpoint)
    assert outputs["QueueUrls"].startswith("default=")
    cloudformation = boto3.client("cloudformation", endpoint_url=aws_endpoint)
    try:
        [stack] = cloudformation.describe_stacks(StackName=name)["Stacks"]
    finally:
        cloudformation.close()
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    given = {p["ParameterKey"]: p["ParameterValue"] for p in stack["Parameters"]}
    assert (given["EnableMetricAlarms"], given["MetricsNamespace"]) == ("true", "Acme/Jobs")
