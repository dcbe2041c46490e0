"""CloudFormation for sqsjobs: the shipped templates and a deploy that reports progress.

``sqsjobs.yaml`` makes the job table and one job queue (with its dead-letter queue, DLQ
alarm and IAM policies); ``sqsjobs-queue.yaml`` adds one more queue for an existing
table. A stack's outputs are what ``SqsJobStore.from_stack`` reads::

    outputs = deploy_stack("jobs", parameters={"QueueName": "default"}, on_event=print)
    store = SqsJobStore.from_stack("jobs")

``build_package`` makes the Lambda zip of an application's jobs (``sqsjobs infra
package``) for one of ``PYTHONS`` on one of ``MACHINES``. This package imports only boto3
(blocking): ``sqsjobs infra`` is a one-off command.
"""

from ._deploy import deploy_stack
from ._package import (
    DEFAULT_ARCH,
    DEFAULT_PYTHON,
    EXTRAS,
    MACHINES,
    PYTHONS,
    Package,
    PackageFailed,
    PackageRefused,
    PackageRequest,
    Target,
    build_package,
)
from ._preview import PlannedChange, StackPreview, current_outputs, preview_stack
from ._stack import DeployOutcome, StackDeployError, StackEvent, StackOutputs, StackOutputsMissing
from ._templates import TEMPLATES, template_parameters, template_text
from ._workers import WorkerSetupError, WorkerStack, job_parameters_for, worker_stack

__all__ = [
    "DEFAULT_ARCH",
    "DEFAULT_PYTHON",
    "EXTRAS",
    "MACHINES",
    "PYTHONS",
    "TEMPLATES",
    "DeployOutcome",
    "Package",
    "PackageFailed",
    "PackageRefused",
    "PackageRequest",
    "PlannedChange",
    "StackDeployError",
    "StackEvent",
    "StackOutputs",
    "StackOutputsMissing",
    "StackPreview",
    "Target",
    "WorkerSetupError",
    "WorkerStack",
    "build_package",
    "current_outputs",
    "deploy_stack",
    "job_parameters_for",
    "preview_stack",
    "template_parameters",
    "template_text",
    "worker_stack",
]
