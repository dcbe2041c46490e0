"""What a deploy would do, without doing it: the parameters it would pass and the change
set CloudFormation computes for them.

The request is the one ``deploy_stack`` would send (``Deployment.request``: parameters
given, kept, upgraded or defaulted), sent as a change set that is read and then deleted,
never executed::

    DescribeStacks ─► GetTemplateSummary ─► CreateChangeSet ─► DescribeChangeSet (until
    it settles, then page by page) ─► DeleteChangeSet (and DeleteStack for a stack the
    preview itself brought into being: CloudFormation holds a new stack's change set in
    an empty stack, REVIEW_IN_PROGRESS)

A stack whose first creation rolled back would be deleted and created again by a
deploy; the preview says so and computes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError  # type: ignore[import-untyped]

from ._deploy import NO_PARAMETERS, NO_TAGS, Deployment, cloudformation_client, outputs
from ._stack import Action, StackDeployError, next_action
from ._templates import template_text

POLL_INTERVAL = 2.0
TIMEOUT = 300.0
NO_CHANGES = ("didn't contain changes", "No updates are to be performed")
KEPT = "(current value)"  # a NoEcho parameter kept: CloudFormation never shows it
MASKED = "****"  # a NoEcho parameter given: not echoed back to a terminal or a CI log


@dataclass(frozen=True)
class PlannedChange:
    """One resource change in a change set."""

    action: str  # Add, Modify, Remove, Import, Dynamic
    logical_id: str
    resource_type: str
    replacement: str | None  # True, False or Conditional for a Modify; None otherwise


@dataclass(frozen=True)
class StackPreview:
    """A deploy not made: to a new stack or an existing one, with which parameters, and
    what CloudFormation would change (``None``: nothing was computed, see ``note``)."""

    stack: str
    exists: bool
    parameters: dict[str, str]
    changes: list[PlannedChange] | None
    note: str = ""


def preview_stack(
    stack_name: str,
    *,
    template: str = "sqsjobs",
    parameters: Mapping[str, str] = NO_PARAMETERS,
    tags: Mapping[str, str] = NO_TAGS,
    endpoint_url: str | None = None,
    region_name: str | None = None,
    connect_timeout: float | None = None,
    max_attempts: int | None = None,
) -> StackPreview:
    """What ``deploy_stack`` with the same arguments would do to ``stack_name``.

    Raises:
        StackDeployError: CloudFormation refused the change set, or did not compute it
            within ``TIMEOUT`` seconds.
        ValueError: ``template`` is not a shipped template's name.
    """
    body = template_text(template)
    client = cloudformation_client(endpoint_url, region_name, connect_timeout, max_attempts)
    try:
        return Preview(client, stack_name).run(body, parameters, tags)
    finally:
        client.close()


def current_outputs(
    stack_name: str,
    *,
    endpoint_url: str | None = None,
    region_name: str | None = None,
    connect_timeout: float | None = None,
    max_attempts: int | None = None,
) -> dict[str, str] | None:
    """The outputs stack ``stack_name`` has now; ``None`` if there is no such stack."""
    client = cloudformation_client(endpoint_url, region_name, connect_timeout, max_attempts)
    try:
        stack = Deployment(client, stack_name).describe(stack_name)
    finally:
        client.close()
    return None if stack is None else outputs(stack)


class Preview:
    """One preview of one stack: the client and how long to wait for the change set."""

    def __init__(
        self,
        client: Any,
        stack_name: str,
        *,
        poll_interval: float = POLL_INTERVAL,
        timeout: float = TIMEOUT,
        sleep: Callable[[float], object] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.stack_name = stack_name
        self.deployment = Deployment(client, stack_name)
        self.poll_interval = poll_interval
        self.timeout = timeout
        self.sleep = sleep
        self.clock = clock

    def run(self, body: str, given: Mapping[str, str], tags: Mapping[str, str]) -> StackPreview:
        stack = self.deployment.describe(self.stack_name)
        status = None if stack is None else str(stack["StackStatus"])
        if stack is not None and next_action(self.stack_name, status) is not Action.UPDATE:
            note = (
                f"Stack {self.stack_name} is {status}: a deploy deletes it and creates it "
                "again, adding every resource of the template"
            )
            return StackPreview(self.stack_name, True, {}, None, note)
        request = self.deployment.request(stack, body, given, tags)
        request["StackName"] = self.stack_name  # a change set takes the name as well as the id
        shown = shown_parameters(request["Parameters"], given, self._no_echo(body))
        kind = "CREATE" if stack is None else "UPDATE"
        name = f"sqsjobs-preview-{int(time.time())}"
        try:
            made = self.client.create_change_set(**request, ChangeSetName=name, ChangeSetType=kind)
        except ClientError as error:  # its message names what is wrong
            message = f"CloudFormation refused a change set for {self.stack_name!r}: {error}"
            raise StackDeployError(self.stack_name, status, message) from error
        try:
            changes = self._changes(made["Id"])
        finally:
            self._clean_up(made, created=stack is None)
        return StackPreview(self.stack_name, stack is not None, shown, changes)

    def _no_echo(self, body: str) -> set[str]:
        summary = self.client.get_template_summary(TemplateBody=body)
        return {str(p["ParameterKey"]) for p in summary.get("Parameters", []) if p.get("NoEcho")}

    def _changes(self, change_set: str) -> list[PlannedChange]:
        """The change set's resource changes, once computed; none if it found nothing."""
        deadline = self.clock() + self.timeout
        while True:
            reply = self.client.describe_change_set(ChangeSetName=change_set)
            status = str(reply.get("Status", ""))
            if status == "CREATE_COMPLETE":
                break
            if status == "FAILED":
                reason = str(reply.get("StatusReason", ""))
                if any(words in reason for words in NO_CHANGES):
                    return []
                raise StackDeployError(self.stack_name, None, f"Change set failed: {reason}")
            if self.clock() >= deadline:
                message = f"Change set still {status} after {self.timeout:.0f} s"
                raise StackDeployError(self.stack_name, None, message)
            self.sleep(self.poll_interval)
        changes = [planned(c) for c in reply.get("Changes", [])]
        while reply.get("NextToken"):
            reply = self.client.describe_change_set(
                ChangeSetName=change_set, NextToken=reply["NextToken"]
            )
            changes += [planned(c) for c in reply.get("Changes", [])]
        return [change for change in changes if change is not None]

    def _clean_up(self, made: Mapping[str, Any], *, created: bool) -> None:
        self.client.delete_change_set(ChangeSetName=made["Id"])
        if created:  # the empty stack CloudFormation made to hold the change set
            self.client.delete_stack(StackName=made["StackId"])


def planned(change: Mapping[str, Any]) -> PlannedChange | None:
    """A change set entry as a ``PlannedChange``; ``None`` for one that is no resource's."""
    resource = change.get("ResourceChange")
    if change.get("Type") != "Resource" or not isinstance(resource, Mapping):
        return None
    replacement = resource.get("Replacement")
    return PlannedChange(
        str(resource.get("Action", "")),
        str(resource.get("LogicalResourceId", "")),
        str(resource.get("ResourceType", "")),
        None if replacement is None else str(replacement),
    )


def shown_parameters(
    chosen: list[dict[str, Any]], given: Mapping[str, str], no_echo: set[str]
) -> dict[str, str]:
    """The parameters as a deploy would pass them, for a person to read: a ``NoEcho``
    value masked, one kept as it is marked kept."""
    shown: dict[str, str] = {}
    for parameter in chosen:
        key = str(parameter["ParameterKey"])
        if parameter.get("UsePreviousValue"):
            shown[key] = KEPT
        elif key in no_echo:
            shown[key] = MASKED
        else:
            shown[key] = str(parameter.get("ParameterValue", ""))
    return dict(sorted(shown.items(), key=lambda item: (item[0] not in given, item[0])))
