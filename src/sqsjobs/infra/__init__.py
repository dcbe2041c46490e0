"""CloudFormation for sqsjobs: the shipped templates and a deploy that reports progress.

``sqsjobs.yaml`` makes the job table and one job queue (with its dead-letter queue, DLQ
alarm and IAM policies); ``sqsjobs-queue.yaml`` adds one more queue for an existing
table. A stack's outputs are what ``SqsJobStore.from_stack`` reads::

    outputs = deploy_stack("jobs", parameters={"QueueName": "default"}, on_event=print)
    store = SqsJobStore.from_stack("jobs")

This package imports only boto3 (blocking): ``sqsjobs infra`` is a one-off command.
"""

from ._deploy import deploy_stack
from ._preview import PlannedChange, StackPreview, current_outputs, preview_stack
from ._stack import DeployOutcome, StackDeployError, StackEvent, StackOutputs, StackOutputsMissing
from ._templates import TEMPLATES, template_parameters, template_text
from ._workers import WorkerSetupError, WorkerStack, job_parameters_for, worker_stack

__all__ = [
    "TEMPLATES",
    "DeployOutcome",
    "PlannedChange",
    "StackDeployError",
    "StackEvent",
    "StackOutputs",
    "StackOutputsMissing",
    "StackPreview",
    "WorkerSetupError",
    "WorkerStack",
    "current_outputs",
    "deploy_stack",
    "job_parameters_for",
    "preview_stack",
    "template_parameters",
    "template_text",
    "worker_stack",
]
