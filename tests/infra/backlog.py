"""The ECS worker template's scaling, evaluated by hand from the template itself.

Application Auto Scaling and CloudWatch cannot run here (the emulator creates neither
the scaling policies nor the alarm), so this module reads both policies and the alarm
out of ``sqsjobs-ecs-worker.yaml`` and applies them to a moment of the world: the visible
messages of each SQS queue and the service's running tasks. A change to the template's
expressions, metrics, thresholds or steps changes what it computes.

What it models, as AWS documents it:

- **Metrics.** ``AWS/SQS ApproximateNumberOfMessagesVisible`` has a value for every
  queue; ``ECS/ContainerInsights RunningTaskCount`` has none for a service with no
  running task ("these metrics reflect only resources with running tasks": Amazon ECS
  Developer Guide, "Container Insights"). One period, one value per metric.
- **Metric math** (CloudWatch User Guide, "Metric math syntax and functions"): the
  operators ``+ - * /``, comparisons (1 if true, else 0), ``IF(condition, a, b)`` and
  ``FILL(m, value)``. A missing operand, or a division by zero, gives no data point.
  Anything else raises ``Unmodelled``.
- **Target tracking** (Application Auto Scaling User Guide, "Target tracking scaling
  policies"): with no data it does nothing; otherwise it aims at the capacity that puts
  the metric at the target, ``ceil(running x metric / target)`` within the scalable
  target's minimum and maximum (out at once; in gradually, after its cooldown: this
  module gives where scale-in ends).
- **Step scaling** on the alarm: above its threshold, the step whose interval holds
  ``value - threshold`` applies; ``ExactCapacity`` sets the capacity, within min and max.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Value = float | None  # None: no data point

TEMPLATE = "sqsjobs-ecs-worker"
SQS_VISIBLE = ("AWS/SQS", "ApproximateNumberOfMessagesVisible")
RUNNING_TASKS = ("ECS/ContainerInsights", "RunningTaskCount")


class Unmodelled(AssertionError):
    """The template uses something this evaluator does not model: extend it, don't guess."""


# -- metric math ---------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d+(?:\.\d+)?)|(?P<name>[A-Za-z_]\w*)|(?P<op>==|!=|>=|<=|[-+*/(),<>]))"
)
COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
}


def tokens(expression: str) -> list[str]:
    found: list[str] = []
    position = 0
    while position < len(expression.rstrip()):
        match = _TOKEN.match(expression, position)
        if match is None:
            raise Unmodelled(f"cannot read {expression[position:]!r} in {expression!r}")
        found.append(match.group(match.lastgroup or ""))
        position = match.end()
    return found


class _Parser:
    """Recursive descent over ``tokens``: comparison < additive < multiplicative < unary."""

    def __init__(self, expression: str, values: Mapping[str, Value]) -> None:
        self.tokens = tokens(expression)
        self.values = values
        self.at = 0

    def parse(self) -> Value:
        result = self.comparison()
        if self.at != len(self.tokens):
            raise Unmodelled(f"unexpected {self.tokens[self.at]!r}")
        return result

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise Unmodelled(f"expected {expected or 'more'}, found {token!r}")
        self.at += 1
        return token

    def comparison(self) -> Value:
        left = self.additive()
        if self.peek() in COMPARISONS:
            compare = COMPARISONS[self.take()]
            right = self.additive()
            return None if left is None or right is None else float(compare(left, right))
        return left

    def additive(self) -> Value:
        result = self.multiplicative()
        while self.peek() in ("+", "-"):
            op, right = self.take(), self.multiplicative()
            if result is None or right is None:
                result = None
            else:
                result = result + right if op == "+" else result - right
        return result

    def multiplicative(self) -> Value:
        result = self.unary()
        while self.peek() in ("*", "/"):
            op, right = self.take(), self.unary()
            if result is None or right is None or (op == "/" and right == 0):
                result = None  # a division by zero gives no data point
            else:
                result = result * right if op == "*" else result / right
        return result

    def unary(self) -> Value:
        if self.peek() == "-":
            self.take()
            value = self.unary()
            return None if value is None else -value
        return self.primary()

    def primary(self) -> Value:
        token = self.take()
        if token == "(":
            value = self.comparison()
            self.take(")")
            return value
        if token[0].isdigit():
            return float(token)
        if self.peek() == "(":
            return self.call(token)
        if token not in self.values:
            raise Unmodelled(f"no metric or expression with id {token!r}")
        return self.values[token]

    def call(self, function: str) -> Value:
        self.take("(")
        arguments = [self.comparison()]
        while self.peek() == ",":
            self.take()
            arguments.append(self.comparison())
        self.take(")")
        if function == "IF" and len(arguments) == 3:
            condition, then, otherwise = arguments
            if condition is None:
                return None
            return then if condition != 0 else otherwise
        if function == "FILL" and len(arguments) == 2:
            series, fill = arguments
            return fill if series is None else series
        raise Unmodelled(f"function {function}({len(arguments)} arguments)")


def evaluate(expression: str, values: Mapping[str, Value]) -> Value:
    """One data point of a metric math ``expression`` over the ``values`` of its ids."""
    return _Parser(expression, values).parse()


# -- the template's intrinsic functions ----------------------------------------------------


@dataclass(frozen=True)
class Stack:
    """The template with its parameters' values (defaults, then those given)."""

    template: Mapping[str, Any]
    parameters: Mapping[str, str]

    @classmethod
    def of(cls, template: Mapping[str, Any], **given: str) -> Stack:
        values = {
            name: str(spec["Default"])
            for name, spec in template["Parameters"].items()
            if "Default" in spec
        }
        unknown = set(given) - set(template["Parameters"])
        assert not unknown, f"not parameters of the template: {unknown}"
        return cls(template, {**values, **given})

    def resource(self, logical_id: str) -> Mapping[str, Any]:
        properties: Mapping[str, Any] = self.template["Resources"][logical_id]["Properties"]
        return properties

    def condition(self, name: str) -> bool:
        return bool(self.resolve(self.template["Conditions"][name]))

    def resolve(self, node: Any) -> Any:
        """``node`` with Ref, Fn::If, Fn::Select, Fn::Split, Fn::Equals, Fn::Not and
        Fn::FindInMap worked out; a resource's Ref or GetAtt is left as it is."""
        if isinstance(node, list):
            return [self.resolve(item) for item in node]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((key, value),) = node.items()
            if key == "Ref":
                return self.parameters.get(value, node)
            if key == "Fn::GetAtt":
                return node
            if key.startswith("Fn::"):
                return self._function(key, value)
        return {key: self.resolve(value) for key, value in node.items()}

    def _function(self, key: str, value: Any) -> Any:
        if key == "Fn::If":
            name, then, otherwise = value
            return self.resolve(then if self.condition(name) else otherwise)
        if key == "Fn::Select":
            index, items = value
            return self.resolve(items)[int(index)]
        if key == "Fn::Split":
            separator, text = value
            return str(self.resolve(text)).split(separator)
        if key == "Fn::Equals":
            left, right = self.resolve(value)
            return left == right
        if key == "Fn::Not":
            (inner,) = self.resolve(value)
            return not inner
        if key == "Fn::FindInMap":
            mapping, key_, name = self.resolve(value)
            return self.template["Mappings"][mapping][str(key_)][name]
        raise Unmodelled(f"intrinsic function {key}")

    def number(self, node: Any) -> float:
        return float(self.resolve(node))


# -- the world at one moment ---------------------------------------------------------------


@dataclass(frozen=True)
class Moment:
    """Visible messages by SQS queue name, and the service's running tasks."""

    visible: Mapping[str, int]
    running: int


def observed(stack: Stack, stat: Mapping[str, Any], moment: Moment) -> Value:
    """The value of one ``MetricStat`` at ``moment`` (one period: every statistic is the
    one value)."""
    metric = stat["Metric"]
    dimensions = {d["Name"]: stack.resolve(d["Value"]) for d in metric.get("Dimensions", [])}
    key = (metric["Namespace"], metric["MetricName"])
    if key == SQS_VISIBLE:
        return float(moment.visible[dimensions["QueueName"]])  # every queue has a value
    if key == RUNNING_TASKS:
        service = {"Fn::GetAtt": ["Service", "Name"]}
        if dimensions.get("ServiceName") != service or "ClusterName" not in dimensions:
            raise Unmodelled(f"RunningTaskCount of another service: {dimensions}")
        return float(moment.running) if moment.running > 0 else None
    raise Unmodelled(f"metric {key}")


def metric_math(stack: Stack, queries: list[Mapping[str, Any]], moment: Moment) -> Value:
    """The value of the one query that returns data, the others evaluated as it needs them."""
    values: dict[str, Value] = {}
    for query in queries:
        if "MetricStat" in query:
            values[query["Id"]] = observed(stack, query["MetricStat"], moment)
    pending = [q for q in queries if "Expression" in q]
    while pending:  # an expression may use another's id: evaluate those it can, in turn
        ready = [q for q in pending if set(_ids(q["Expression"])) <= set(values)]
        if not ready:
            raise Unmodelled(f"expressions with ids of no metric: {pending}")
        for query in ready:
            values[query["Id"]] = evaluate(query["Expression"], values)
            pending.remove(query)
    (returned,) = [q["Id"] for q in queries if q.get("ReturnData", True)]
    return values[returned]


def _ids(expression: str) -> list[str]:
    names = [t for t in tokens(expression) if t[0].isalpha() or t[0] == "_"]
    return [name for name in names if name not in ("IF", "FILL")]


# -- the policies ----------------------------------------------------------------------------


def backlog_per_task(stack: Stack, moment: Moment) -> Value:
    """The target tracking policy's metric at ``moment``."""
    config = stack.resource("BacklogPerTaskPolicy")["TargetTrackingScalingPolicyConfiguration"]
    return metric_math(stack, config["CustomizedMetricSpecification"]["Metrics"], moment)


def waiting_without_task(stack: Stack, moment: Moment) -> Value:
    """The scale-from-zero alarm's value at ``moment``."""
    return metric_math(stack, stack.resource("ScaleFromZeroAlarm")["Metrics"], moment)


def bounds(stack: Stack) -> tuple[int, int]:
    target = stack.resource("ScalableTarget")
    return int(stack.number(target["MinCapacity"])), int(stack.number(target["MaxCapacity"]))


def clamp(stack: Stack, capacity: int) -> int:
    low, high = bounds(stack)
    return max(low, min(high, capacity))


def step_capacity(stack: Stack, moment: Moment) -> int | None:
    """The capacity the step policy sets, if its alarm is breached at ``moment``."""
    alarm = stack.resource("ScaleFromZeroAlarm")
    if alarm["ComparisonOperator"] != "GreaterThanThreshold":
        raise Unmodelled(f"comparison {alarm['ComparisonOperator']}")
    value, threshold = waiting_without_task(stack, moment), stack.number(alarm["Threshold"])
    if value is None or value <= threshold:
        return None
    actions = alarm["AlarmActions"]
    if actions != [{"Ref": "ScaleFromZeroPolicy"}]:
        raise Unmodelled(f"alarm actions {actions}")
    config = stack.resource("ScaleFromZeroPolicy")["StepScalingPolicyConfiguration"]
    if config["AdjustmentType"] != "ExactCapacity":
        raise Unmodelled(f"adjustment {config['AdjustmentType']}")
    breach = value - threshold
    for step in config["StepAdjustments"]:
        low = step.get("MetricIntervalLowerBound", -math.inf)
        high = step.get("MetricIntervalUpperBound", math.inf)
        if float(low) <= breach < float(high):
            return clamp(stack, int(step["ScalingAdjustment"]))
    raise Unmodelled(f"no step for a breach of {breach}")


def tracked_capacity(stack: Stack, moment: Moment) -> int | None:
    """Where target tracking takes the service from ``moment`` (``None``: no data, it
    does nothing)."""
    config = stack.resource("BacklogPerTaskPolicy")["TargetTrackingScalingPolicyConfiguration"]
    metric = backlog_per_task(stack, moment)
    if metric is None:
        return None
    target = stack.number(config["TargetValue"])
    return clamp(stack, math.ceil(moment.running * metric / target))


def desired_tasks(stack: Stack, moment: Moment) -> int:
    """The service's desired count after both policies have acted on ``moment``: the
    larger capacity when both act (as Application Auto Scaling resolves it), the running
    count when neither does."""
    step, tracked = step_capacity(stack, moment), tracked_capacity(stack, moment)
    decided = [capacity for capacity in (step, tracked) if capacity is not None]
    return max(decided) if decided else moment.running
