"""Worker stacks beside a job stack, as ``sqsjobs infra deploy --ecs-worker`` and
``--lambda-worker`` deploy them: one command for the table, the queue and its workers.

The job stack goes first; the worker stack (``{stack}-ecs-worker`` or
``{stack}-lambda-worker``) follows from the job stack's outputs, which its template
takes as parameters of the same names (``TableName``, ``QueueUrls``, ``WorkerPolicyArn``
and so on). An output the job stack has only under a condition (``PriorityLaneUrls``,
``KeyUsePolicyArn``) is passed empty when it is absent, which is what the worker
templates take for "none". What only the person deploying knows (an image, subnets, a
code bucket) comes from ``-w KEY=VALUE``, checked against the worker template before
anything is sent.

A Lambda worker owns its queue's event source mapping, so the job stack's
``WorkerFunctionArn`` stays empty, and the queue's visibility timeout follows the
function's timeout: six times it, AWS's advice for a queue a function reads, unless a
``VisibilityTimeout`` of at least the timeout is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ._templates import (
    declared_outputs,
    parameters_without_default,
    template_parameters,
    template_text,
)

KINDS = {"ecs": "sqsjobs-ecs-worker", "lambda": "sqsjobs-lambda-worker"}
JOB_TEMPLATES = ("sqsjobs", "sqsjobs-queue")
VISIBILITY_PER_TIMEOUT = 6
DEFAULT_LAMBDA_TIMEOUT = 30  # the worker template's Timeout default


class WorkerSetupError(ValueError):
    """A worker stack that cannot be deployed as asked; nothing was sent."""


@dataclass(frozen=True)
class WorkerStack:
    """The worker stack to deploy after job stack ``job_stack``."""

    kind: str  # "ecs" or "lambda"
    job_stack: str
    job_template: str
    given: Mapping[str, str] = field(default_factory=dict)

    @property
    def stack(self) -> str:
        """The worker stack's name: ``{job_stack}-ecs-worker`` or ``-lambda-worker``."""
        return f"{self.job_stack}-{self.kind}-worker"

    @property
    def template(self) -> str:
        """The shipped template it is deployed from (one of ``TEMPLATES``)."""
        return KINDS[self.kind]

    def inherited(self) -> tuple[str, ...]:
        """The worker template's parameters that the job stack's outputs fill."""
        outputs = declared_outputs(template_text(self.job_template))
        return tuple(name for name in template_parameters(self.template) if name in outputs)

    def parameters(self, outputs: Mapping[str, str]) -> dict[str, str]:
        """What the worker stack is deployed with: the job stack's ``outputs`` (empty for
        one the stack does not have), then what was given."""
        inherited = {name: outputs.get(name, "") for name in self.inherited()}
        return {**inherited, **self.given}


def worker_stack(
    kind: str, job_stack: str, job_template: str, given: Mapping[str, str]
) -> WorkerStack:
    """The worker stack, its ``given`` parameters checked: refused (``WorkerSetupError``)
    when a key is unknown, one the job stack fills is given, or a required one is missing.
    """
    if job_template not in JOB_TEMPLATES:
        raise WorkerSetupError(
            f"A worker stack goes beside a job stack (template {' or '.join(JOB_TEMPLATES)}), "
            f"not beside template {job_template}"
        )
    worker = WorkerStack(kind, job_stack, job_template, dict(given))
    declared = template_parameters(worker.template)
    unknown = [key for key in given if key not in declared]
    if unknown:
        raise WorkerSetupError(
            f"Unknown worker parameter {', '.join(map(repr, unknown))} for template "
            f"{worker.template}: valid parameters are {', '.join(declared)}"
        )
    inherited = worker.inherited()
    overridden = [key for key in given if key in inherited]
    if overridden:
        raise WorkerSetupError(
            f"Worker parameter {', '.join(map(repr, overridden))} comes from stack "
            f"{job_stack}'s outputs: the worker must serve the queue that stack made"
        )
    missing = [
        key
        for key in parameters_without_default(worker.template)
        if key not in given and key not in inherited
    ]
    if kind == "lambda":
        missing += _code_missing(given)
    if missing:
        raise WorkerSetupError(
            f"Template {worker.template} needs {', '.join(missing)}: give each with "
            f"-w KEY=VALUE (docs/deploy-{kind}.md)"
        )
    return worker


def _code_missing(given: Mapping[str, str]) -> list[str]:
    """A Lambda worker's code: a zip in S3 (``sqsjobs infra package``) or an image."""
    in_s3 = bool(given.get("CodeS3Bucket")) and bool(given.get("CodeS3Key"))
    image = bool(given.get("ImageUri"))
    if in_s3 == image:
        return ["CodeS3Bucket and CodeS3Key (the zip of sqsjobs infra package), or ImageUri"]
    return []


def job_parameters_for(worker: WorkerStack, given: Mapping[str, str]) -> dict[str, str]:
    """The job stack's parameters, with what its worker needs of them.

    A Lambda worker: no ``WorkerFunctionArn`` (the worker stack maps the queue to its
    function), no priority lane unless ``PriorityLaneFrom`` is given (the function reads
    the job queue alone; a lane's copies would only wait there), and a
    ``VisibilityTimeout`` six times the function's ``Timeout`` unless one at least as
    long is given. An ECS worker needs nothing of them: its jobs' leases set
    each message's visibility.
    """
    if worker.kind != "lambda":
        return dict(given)
    if given.get("WorkerFunctionArn"):
        raise WorkerSetupError(
            "WorkerFunctionArn stays empty with --lambda-worker: the worker stack maps the "
            "queue to its own function"
        )
    timeout = _whole(worker.given.get("Timeout", str(DEFAULT_LAMBDA_TIMEOUT)), "Timeout")
    given = {"PriorityLaneFrom": "", **given}  # the function reads the job queue alone
    if "VisibilityTimeout" not in given:
        return {**given, "VisibilityTimeout": str(VISIBILITY_PER_TIMEOUT * timeout)}
    visibility = _whole(given["VisibilityTimeout"], "VisibilityTimeout")
    if visibility < timeout:
        raise WorkerSetupError(
            f"VisibilityTimeout {visibility} is shorter than the function's Timeout "
            f"{timeout}: a message would come back while its job still runs (best: "
            f"{VISIBILITY_PER_TIMEOUT * timeout}, six times the timeout)"
        )
    return dict(given)


def _whole(text: str, name: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise WorkerSetupError(f"{name} must be a whole number of seconds, not {text!r}")
    return int(text)
