"""What a deploy decides without calling AWS: stack states, parameters, events, failures.

CloudFormation reports an operation's progress as stack events (one per resource status
change, newest first) and its outcome as the stack's status. The rules for reading them
live here as plain functions, so the deploy loop in ``_deploy`` only moves data:

- ``next_action``: a missing stack is created; a settled one is updated; one whose
  creation rolled back (``ROLLBACK_COMPLETE``) holds nothing and cannot be updated, so it
  is deleted and created anew; any other state needs a person.
- ``chosen_parameters``: on update, a parameter not given keeps the stack's value, as
  ``aws cloudformation deploy`` does; otherwise a re-deploy without ``--parameter`` would
  silently reset, say, the queue name to its default and replace the queues.
- ``deploy_failure``: a rollback is explained by its first failed resource, not by the
  stack's own summary event or by the siblings CloudFormation cancelled because of it.
- ``missing_outputs``: a deploy that settled is checked against its template: every
  output the template declares without a ``Condition`` must be there, or the stack is
  not one ``from_stack`` and ``--stack`` can use. CloudFormation itself never drops one
  from a successful operation; the local emulator does, when an update changes a
  resource it cannot update (docs/how-to/testing.md, "Testing with the emulator"), and then
  reports ``UPDATE_COMPLETE``. A deploy that ended so fails, naming what is missing,
  instead of leaving every later command to fail on the stack.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..core.errors import JobError

STACK_TYPE = "AWS::CloudFormation::Stack"
SUCCEEDED = frozenset({"CREATE_COMPLETE", "UPDATE_COMPLETE"})
UPDATABLE = frozenset(
    {
        "CREATE_COMPLETE",
        "UPDATE_COMPLETE",
        "UPDATE_ROLLBACK_COMPLETE",
        "IMPORT_COMPLETE",
        "IMPORT_ROLLBACK_COMPLETE",
    }
)
CREATION_ROLLED_BACK = "ROLLBACK_COMPLETE"
# CloudFormation marks the resources it stopped because another one failed with these.
CANCELLED_REASONS = ("Resource creation cancelled", "Resource update cancelled")


class Action(enum.Enum):
    CREATE = "create"
    UPDATE = "update"
    RECREATE = "recreate"


class DeployOutcome(enum.Enum):
    """What a deploy did to its stack, as the command line reports it."""

    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"  # CloudFormation found nothing to change


class StackOutputs(dict[str, str]):
    """A stack's outputs (``{OutputKey: OutputValue}``), and what its deploy did.

    A ``dict`` still, as ``deploy_stack`` always returned, with ``outcome`` and the
    stack's ``status`` besides, so a caller can report "created" or "unchanged".
    """

    def __init__(self, outputs: Mapping[str, str], outcome: DeployOutcome, status: str) -> None:
        super().__init__(outputs)
        self.outcome = outcome
        self.status = status


@dataclass(frozen=True)
class StackEvent:
    """One step of a deploy, as CloudFormation reported it: a resource changed status."""

    event_id: str
    timestamp: datetime
    logical_id: str
    resource_type: str
    status: str
    reason: str | None

    @classmethod
    def from_reply(cls, raw: Mapping[str, Any]) -> StackEvent:
        """An event from one entry of ``DescribeStackEvents``' ``StackEvents``."""
        return cls(
            event_id=str(raw["EventId"]),
            timestamp=raw["Timestamp"],
            logical_id=str(raw.get("LogicalResourceId", "")),
            resource_type=str(raw.get("ResourceType", "")),
            status=str(raw.get("ResourceStatus", "")),
            reason=raw.get("ResourceStatusReason") or None,
        )

    @property
    def failed(self) -> bool:
        """Whether the resource failed (a ``*_FAILED`` status): the event says why."""
        return self.status.endswith("_FAILED")

    def __str__(self) -> str:
        text = f"{self.logical_id} ({self.resource_type}) {self.status}"
        return f"{text}: {self.reason}" if self.reason else text


class StackDeployError(JobError, RuntimeError):
    """A deploy did not finish: CloudFormation refused it, rolled it back, or it timed out.

    ``failures`` are the failed resource events that explain a rollback, oldest first.
    """

    def __init__(
        self,
        stack_name: str,
        status: str | None,
        message: str,
        failures: Sequence[StackEvent] = (),
    ) -> None:
        super().__init__(message)
        self.stack_name = stack_name
        self.status = status
        self.failures = tuple(failures)


class StackOutputsMissing(StackDeployError):
    """The stack settled without outputs its template declares (``missing``); ``outputs``
    are the ones it has."""

    def __init__(self, stack_name: str, status: str, missing: Sequence[str], outputs: StackOutputs):
        super().__init__(stack_name, status, _missing_message(stack_name, status, missing))
        self.missing = tuple(missing)
        self.outputs = outputs


def missing_outputs(declared: Mapping[str, str | None], outputs: Mapping[str, str]) -> list[str]:
    """The outputs ``declared`` without a condition that ``outputs`` lacks, in their order.

    An output under a ``Condition`` is left out: whether it should be there is the
    template's conditions evaluated on the stack's parameters, which CloudFormation does
    and this does not repeat; the outputs stores read have none.
    """
    return [
        name for name, condition in declared.items() if condition is None and name not in outputs
    ]


def _missing_message(stack_name: str, status: str, missing: Sequence[str]) -> str:
    return (
        f"Stack {stack_name!r} is {status} but lacks output(s) {', '.join(missing)} of its "
        "template, which stores and --stack read. The local emulator drops from a stack what "
        "an update changes and it cannot update (the job table, IAM managed policies): "
        "deploy a new stack there. On AWS, compare the stack's resources with the template "
        "in the CloudFormation console, then deploy again"
    )


def is_settled(status: str) -> bool:
    """Whether CloudFormation has finished with the stack (successfully or not)."""
    return not status.endswith("_IN_PROGRESS")


def next_action(stack_name: str, status: str | None) -> Action:
    """What deploying to a stack in ``status`` (``None``: no such stack) must do."""
    if status is None:
        return Action.CREATE
    if status in UPDATABLE:
        return Action.UPDATE
    if status == CREATION_ROLLED_BACK:
        return Action.RECREATE
    if not is_settled(status):
        reason = "another operation is in progress; wait for it to finish"
    else:
        reason = "fix or delete it in the CloudFormation console first"
    raise StackDeployError(
        stack_name, status, f"Stack {stack_name!r} cannot be deployed while {status}: {reason}"
    )


@dataclass(frozen=True)
class Declared:
    """A template parameter, as ``GetTemplateSummary`` describes it."""

    default: str | None
    no_echo: bool


def chosen_parameters(
    given: Mapping[str, str], declared: Mapping[str, Declared], previous: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Every parameter's value: ``given``, else the stack's current one, else the default.

    Passing all of them, defaults included, gives creates and updates one rule and keeps
    the local emulator on the path AWS takes: it only honours ``UsePreviousValue`` for
    parameters given at creation, and it re-creates every resource whose parameters were
    not given at creation, including ones a false Condition left out (which fails).
    ``NoEcho`` values come back masked, so those keep theirs with ``UsePreviousValue``. A
    given key the template lacks is passed on, for CloudFormation to refuse by name.
    """
    chosen: list[dict[str, Any]] = [
        {"ParameterKey": key, "ParameterValue": value} for key, value in given.items()
    ]
    for key, slot in declared.items():
        if key in given:
            continue
        if key in previous and slot.no_echo:
            chosen.append({"ParameterKey": key, "UsePreviousValue": True})
        elif key in previous:
            chosen.append({"ParameterKey": key, "ParameterValue": previous[key]})
        elif slot.default is not None:
            chosen.append({"ParameterKey": key, "ParameterValue": slot.default})
    return chosen


def root_causes(stack_name: str, events: Iterable[StackEvent]) -> list[StackEvent]:
    """The failed resource events that explain a failure, oldest first."""
    failed = [e for e in events if e.failed]
    resources = [e for e in failed if not _is_stack(stack_name, e)]
    causes = [e for e in resources if not (e.reason or "").startswith(CANCELLED_REASONS)]
    return causes or resources or failed


def deploy_failure(stack_name: str, status: str, events: Iterable[StackEvent]) -> StackDeployError:
    """The error for an operation that settled in ``status`` (not a success)."""
    causes = root_causes(stack_name, events)
    message = f"Stack {stack_name!r} failed to deploy ({status})"
    if causes:
        message += f": {causes[0]}"
        if len(causes) > 1:
            message += f" (and {len(causes) - 1} more failed resource(s))"
    else:
        message += "; its events in the CloudFormation console say why"
    return StackDeployError(stack_name, status, message, causes)


def _is_stack(stack_name: str, event: StackEvent) -> bool:
    return event.resource_type == STACK_TYPE and event.logical_id == stack_name
