"""The ECS worker's scaling on worked examples, computed from the template's own policies.

``tests/infra/backlog.py`` reads the target tracking policy (backlog per task: the job
queue's visible messages over the service's running tasks), the scale-from-zero alarm
and its step policy out of ``sqsjobs-ecs-worker.yaml`` and applies them; these examples
say what the service scales to. Target tracking aims at
``ceil(running x visible / running / target)`` tasks within MinTasks..MaxTasks, and has
no data at zero tasks, where the step policy starts one task if messages are visible.
"""

from __future__ import annotations

import pytest

from .backlog import (
    Moment,
    Stack,
    Unmodelled,
    backlog_per_task,
    desired_tasks,
    evaluate,
    step_capacity,
    tracked_capacity,
    waiting_without_task,
)
from .support import load_template

TEMPLATE = load_template("sqsjobs-ecs-worker")
ACCOUNT = "https://sqs.eu-west-1.amazonaws.com/123456789012"
QUEUE = "app-default"  # the SQS name of the job stack's queue "default"
LANE = "app-default-lane"
JOB_STACK = {
    "QueueUrls": f"default={ACCOUNT}/{QUEUE}",
    "DeadLetterQueueUrls": f"default={ACCOUNT}/{QUEUE}-dlq",
    "PriorityLaneUrls": f"default@1={ACCOUNT}/{LANE}",
}


def stack(**given: str) -> Stack:
    return Stack.of(TEMPLATE, **JOB_STACK, **given)


def at(visible: int, running: int, lane: int = 0) -> Moment:
    return Moment({QUEUE: visible, LANE: lane}, running)


# -- the worked examples -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("visible", "running", "given", "expected"),
    [
        # Idle and scaled to zero: no data for target tracking, nothing for the step.
        (0, 0, {}, 0),
        # Messages arrive while no task runs: the step policy starts one.
        (5, 0, {}, 1),
        (100_000, 0, {}, 1),  # one, whatever the backlog: target tracking takes it from there
        # 1,000 messages over 2 tasks is 500 per task; at 100 per task that needs 10.
        (1_000, 2, {"TargetBacklogPerTask": "100"}, 10),
        (1_000, 2, {"TargetBacklogPerTask": "100", "MaxTasks": "6"}, 6),
        # 250 over 2 tasks: 125 per task, so 2.5 tasks' worth: 3.
        (250, 2, {"TargetBacklogPerTask": "100"}, 3),
        # At the target: no change.
        (500, 5, {"TargetBacklogPerTask": "100"}, 5),
        # 30 over 4 tasks: 7.5 per task, 0.3 tasks' worth: in to 1, or to MinTasks.
        (30, 4, {"TargetBacklogPerTask": "100"}, 1),
        (30, 4, {"TargetBacklogPerTask": "100", "MinTasks": "2"}, 2),
        # The queue stays empty: in to MinTasks, zero by default.
        (0, 3, {}, 0),
        (0, 3, {"MinTasks": "1"}, 1),
        # The default target, 10 x the default concurrency.
        (1_000, 1, {}, 10),
        (1_000, 1, {"TargetBacklogPerTask": "40", "MaxTasks": "20"}, 20),
    ],
)
def test_worked_examples(visible: int, running: int, given: dict[str, str], expected: int) -> None:
    assert desired_tasks(stack(**given), at(visible, running)) == expected


def test_backlog_per_task_is_the_visible_messages_over_the_running_tasks() -> None:
    assert backlog_per_task(stack(), at(1_000, 2)) == 500
    assert backlog_per_task(stack(), at(0, 4)) == 0
    assert backlog_per_task(stack(), at(7, 0)) is None  # no data at zero tasks


def test_urgent_jobs_count_once() -> None:
    """40 urgent jobs: each has its message on the job queue and a copy on the lane. The
    backlog is 40, not 80: one task at a target of 10 needs 4 tasks."""
    moment = at(40, 1, lane=40)
    assert backlog_per_task(stack(), moment) == 40
    assert desired_tasks(stack(TargetBacklogPerTask="10"), moment) == 4


def test_the_metric_reads_the_queue_the_job_stack_names() -> None:
    other = Stack.of(TEMPLATE, **{**JOB_STACK, "QueueUrls": f"reports={ACCOUNT}/app-reports"})
    assert backlog_per_task(other, Moment({"app-reports": 300}, 3)) == 100
    with pytest.raises(KeyError):  # it does not read app-default
        backlog_per_task(other, at(300, 3))


# -- the two policies never pull against each other ----------------------------------------


@pytest.mark.parametrize("visible", [0, 1, 99, 100, 101, 10_000])
@pytest.mark.parametrize("running", [0, 1, 2, 7])
def test_exactly_one_policy_has_a_say(visible: int, running: int) -> None:
    """With tasks running the alarm reads 0 and the step stays out; at zero tasks target
    tracking has no data. So ExactCapacity 1 never scales a running service in."""
    moment = at(visible, running)
    tracked, step = tracked_capacity(stack(), moment), step_capacity(stack(), moment)
    if running:
        assert waiting_without_task(stack(), moment) == 0
        assert step is None
        assert tracked is not None
    else:
        assert tracked is None
        assert step == (1 if visible else None)


def test_the_step_starts_at_least_min_tasks() -> None:
    assert step_capacity(stack(MinTasks="3", MaxTasks="8"), at(5, 0)) == 3


# -- the metric math evaluator -------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "values", "expected"),
    [
        ("m1 / m2", {"m1": 10.0, "m2": 4.0}, 2.5),
        ("m1 / m2", {"m1": 10.0, "m2": 0.0}, None),  # division by zero: no data point
        ("m1 / m2", {"m1": 10.0, "m2": None}, None),
        ("m1 + m2 * 2 - 1", {"m1": 1.0, "m2": 3.0}, 6.0),
        ("(m1 + m2) * 2", {"m1": 1.0, "m2": 3.0}, 8.0),
        ("-m1 + 4", {"m1": 1.0}, 3.0),
        ("IF(FILL(running, 0) == 0, visible, 0)", {"running": None, "visible": 9.0}, 9.0),
        ("IF(FILL(running, 0) == 0, visible, 0)", {"running": 0.0, "visible": 9.0}, 9.0),
        ("IF(FILL(running, 0) == 0, visible, 0)", {"running": 2.0, "visible": 9.0}, 0.0),
        ("IF(running == 0, visible, 0)", {"running": None, "visible": 9.0}, None),
        ("m1 >= 3", {"m1": 3.0}, 1.0),
        ("m1 < 3", {"m1": 3.0}, 0.0),
        ("m1 != 3", {"m1": 2.5}, 1.0),
    ],
)
def test_metric_math(
    expression: str, values: dict[str, float | None], expected: float | None
) -> None:
    assert evaluate(expression, values) == expected


@pytest.mark.parametrize(
    "expression", ["SUM(METRICS())", "m1 ^ 2", "m3 / m1", "IF(m1, m1)", "m1 / (m1", "m1 m1"]
)
def test_what_the_evaluator_does_not_model_raises(expression: str) -> None:
    with pytest.raises(Unmodelled):
        evaluate(expression, {"m1": 1.0})
