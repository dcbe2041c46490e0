"""Create or update a stack from a shipped template, report its events, return its outputs.

The loop polls ``DescribeStacks`` until the stack settles, as botocore's
``stack_create_complete``/``stack_update_complete`` waiters do, but reads the new stack
events on every round so a caller can show progress; the waiters would sit silent for
minutes. Every decision (what to do with the stack's current state, which parameters to
pass, which event explains a rollback) is a pure function in ``_stack``.

Blocking boto3 only: a deploy is a one-off command, and ``sqsjobs.infra`` must not load
aioboto3.

A deploy that settles is checked against its template (``_stack.missing_outputs``): a
stack without the outputs stores read fails the deploy, naming them, rather than every
command after it. It returns the outputs with what it did (``StackOutputs.outcome``:
created, updated, or unchanged when CloudFormation found nothing to change).

Every deploy of a template with a job table also sets the stack's policy before
creating or updating it: the table is retained on replacement, so a change that replaced
it would leave it behind and point every worker at a new, empty table. The policy denies
``Update:Replace`` and ``Update:Delete`` on it, and CloudFormation then fails such an
update and rolls it back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Protocol

import boto3  # type: ignore[import-untyped]
from botocore.config import Config  # type: ignore[import-untyped]
from botocore.exceptions import ClientError  # type: ignore[import-untyped]

from ._stack import (
    SUCCEEDED,
    Action,
    Declared,
    DeployOutcome,
    StackDeployError,
    StackEvent,
    StackOutputs,
    StackOutputsMissing,
    chosen_parameters,
    deploy_failure,
    is_settled,
    missing_outputs,
    next_action,
)
from ._templates import declared_outputs, template_text

# Creating or updating needs it: the templates make IAM managed policies (unnamed).
CAPABILITIES = ["CAPABILITY_IAM"]
POLL_INTERVAL = 5.0
TIMEOUT = 3_600.0  # as long as botocore's stack waiters wait

NO_PARAMETERS: Mapping[str, str] = MappingProxyType({})
NO_TAGS: Mapping[str, str] = MappingProxyType({})
# Per template, the resources no stack update may replace or remove.
PROTECTED: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"sqsjobs": ("JobTable",), "sqsjobs-queue": ()}
)
EventCallback = Callable[[StackEvent], object]


class CloudFormationClient(Protocol):
    """The part of boto3's CloudFormation client a deploy uses (its replies are dicts)."""

    def describe_stacks(self, **kwargs: Any) -> dict[str, Any]: ...
    def describe_stack_events(self, **kwargs: Any) -> dict[str, Any]: ...
    def get_template_summary(self, **kwargs: Any) -> dict[str, Any]: ...
    def create_stack(self, **kwargs: Any) -> dict[str, Any]: ...
    def update_stack(self, **kwargs: Any) -> dict[str, Any]: ...
    def delete_stack(self, **kwargs: Any) -> dict[str, Any]: ...
    def set_stack_policy(self, **kwargs: Any) -> dict[str, Any]: ...


def deploy_stack(
    stack_name: str,
    *,
    template: str = "sqsjobs",
    parameters: Mapping[str, str] = NO_PARAMETERS,
    tags: Mapping[str, str] = NO_TAGS,
    endpoint_url: str | None = None,
    region_name: str | None = None,
    on_event: EventCallback | None = None,
    connect_timeout: float | None = None,
    max_attempts: int | None = None,
) -> StackOutputs:
    """Create or update stack ``stack_name`` from a shipped template; return its outputs.

    Waits until CloudFormation has finished; an update with nothing to change succeeds at
    once, and a stack whose first creation rolled back is deleted and created again.

    Args:
        stack_name: The stack to create, or to update if it exists.
        template: One of ``TEMPLATES``.
        parameters: The template's parameters; on update, those not given keep the
            stack's current values.
        tags: Set on the stack beside the tags it has (a key it has is changed);
            CloudFormation copies stack tags to every resource that takes tags.
        endpoint_url: Overrides boto3's endpoint chain (``AWS_ENDPOINT_URL``).
        region_name: Overrides boto3's region chain (``AWS_REGION``, profiles).
        on_event: Called with each stack event of the operation as it appears.
        connect_timeout: Seconds to connect; left out, botocore's 60.
        max_attempts: Tries per call; left out, botocore's five.

    Returns:
        The outputs (a ``dict``), whose ``outcome`` says whether the stack was created,
        updated or left unchanged.

    Raises:
        StackDeployError: CloudFormation refused the request, rolled the operation back
            (the message names the failed resource and why: a change that would replace
            the job table is denied by the stack policy), or did not finish in time;
            ``StackOutputsMissing`` when it settled without outputs the template declares.
        ValueError: ``template`` is not a shipped template's name.
    """
    body = template_text(template)
    client = cloudformation_client(endpoint_url, region_name, connect_timeout, max_attempts)
    try:
        deployment = Deployment(client, stack_name, on_event)
        return deployment.run(body, parameters, tags=tags, policy=stack_policy(template))
    finally:
        client.close()


def cloudformation_client(
    endpoint_url: str | None,
    region_name: str | None,
    connect_timeout: float | None,
    max_attempts: int | None,
) -> Any:
    """A blocking CloudFormation client on boto3's standard chain, with the timeouts and
    attempts given (botocore's defaults otherwise: 60 s, five attempts)."""
    session = boto3.session.Session(region_name=region_name)
    retries = {"mode": "standard", "max_attempts": max_attempts or 5}
    timeouts = {} if connect_timeout is None else {"connect_timeout": connect_timeout}
    config = Config(retries=retries, **timeouts)
    return session.client("cloudformation", endpoint_url=endpoint_url, config=config)


class Deployment:
    """One deploy of one stack: the client, where to report, and how long to wait."""

    def __init__(
        self,
        client: CloudFormationClient,
        stack_name: str,
        on_event: EventCallback | None = None,
        *,
        poll_interval: float = POLL_INTERVAL,
        timeout: float = TIMEOUT,
        sleep: Callable[[float], object] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.stack_name = stack_name
        self.on_event = on_event
        self.poll_interval = poll_interval
        self.timeout = timeout
        self.sleep = sleep
        self.clock = clock

    def run(
        self,
        body: str,
        given: Mapping[str, str],
        *,
        tags: Mapping[str, str] = NO_TAGS,
        policy: str | None = None,
    ) -> StackOutputs:
        """Create or update the stack from ``body``; ``policy`` is its stack policy (JSON).

        Raises:
            StackOutputsMissing: the stack settled without outputs ``body`` declares.
        """
        stack = self.describe(self.stack_name)
        action = next_action(self.stack_name, None if stack is None else stack["StackStatus"])
        if stack is not None and action is Action.UPDATE:
            deployed = self._update_existing(stack, body, given, tags, policy)
        else:
            if stack is not None:  # Action.RECREATE
                self._delete(stack["StackId"])
            created = self._create(body, given, tags, policy)
            deployed = self._settle(created, None, DeployOutcome.CREATED)
        missing = missing_outputs(declared_outputs(body), deployed)
        if missing:
            raise StackOutputsMissing(self.stack_name, deployed.status, missing, deployed)
        return deployed

    def _update_existing(
        self,
        stack: Mapping[str, Any],
        body: str,
        given: Mapping[str, str],
        tags: Mapping[str, str],
        policy: str | None,
    ) -> StackOutputs:
        seen = self._newest_event_id(stack["StackId"])
        if policy is not None:
            # Set before the update, so that the policy already governs it (a stack
            # deployed before the policy existed is protected from its first update on).
            self.client.set_stack_policy(StackName=stack["StackId"], StackPolicyBody=policy)
        if not self._update(stack, body, given, tags):
            return StackOutputs(outputs(stack), DeployOutcome.UNCHANGED, str(stack["StackStatus"]))
        return self._settle(stack["StackId"], seen, DeployOutcome.UPDATED)

    def request(
        self,
        stack: Mapping[str, Any] | None,
        body: str,
        given: Mapping[str, str],
        tags: Mapping[str, str],
    ) -> dict[str, Any]:
        """The ``CreateStack`` (no ``stack`` yet) or ``UpdateStack`` request a deploy sends:
        parameters given, else kept, upgraded or defaulted (``chosen_parameters``), tags
        added to the stack's. A change set (``_preview``) takes the same fields."""
        declared = self._declared(body)
        previous: dict[str, str] = {}
        current: dict[str, str] = {}
        if stack is not None:
            previous = {p["ParameterKey"]: p["ParameterValue"] for p in stack.get("Parameters", [])}
            given = {**upgrade_defaults(declared, previous), **given}
            current = {t["Key"]: t["Value"] for t in stack.get("Tags", [])}
        request: dict[str, Any] = {
            "StackName": self.stack_name if stack is None else stack["StackId"],
            "TemplateBody": body,
            "Parameters": chosen_parameters(given, declared, previous),
            "Capabilities": CAPABILITIES,
        }
        if tags:  # without Tags, CloudFormation keeps the stack's; with them, it replaces all
            request["Tags"] = tag_list({**current, **tags})
        return request

    def _create(
        self, body: str, given: Mapping[str, str], tags: Mapping[str, str], policy: str | None
    ) -> str:
        request = self.request(None, body, given, tags)
        if policy is not None:
            request["StackPolicyBody"] = policy
        try:
            return str(self.client.create_stack(**request)["StackId"])
        except ClientError as error:
            raise self._refused("create", error) from error

    def _update(
        self, stack: Mapping[str, Any], body: str, given: Mapping[str, str], tags: Mapping[str, str]
    ) -> bool:
        """Start an update; ``False`` if CloudFormation found nothing to change."""
        try:
            self.client.update_stack(**self.request(stack, body, given, tags))
        except ClientError as error:
            if _message(error) == "No updates are to be performed.":
                return False
            raise self._refused("update", error) from error
        return True

    def _declared(self, body: str) -> dict[str, Declared]:
        """The template's parameters, as CloudFormation reads them."""
        summary = self.client.get_template_summary(TemplateBody=body)
        return {
            str(p["ParameterKey"]): Declared(
                None if p.get("DefaultValue") is None else str(p["DefaultValue"]),
                bool(p.get("NoEcho")),
            )
            for p in summary.get("Parameters", [])
        }

    def _delete(self, stack_id: str) -> None:
        seen = self._newest_event_id(stack_id)
        self.client.delete_stack(StackName=stack_id)
        status, events = self._wait(stack_id, seen)
        if status != "DELETE_COMPLETE":
            raise deploy_failure(self.stack_name, status, events)

    def _settle(self, stack_id: str, seen: str | None, outcome: DeployOutcome) -> StackOutputs:
        """Wait for the operation started on ``stack_id``; its outputs, or why it failed."""
        status, events = self._wait(stack_id, seen)
        if status not in SUCCEEDED:
            raise deploy_failure(self.stack_name, status, events)
        stack = self.describe(stack_id)
        return StackOutputs({} if stack is None else outputs(stack), outcome, status)

    def _wait(self, stack_id: str, seen: str | None) -> tuple[str, list[StackEvent]]:
        """Poll until the stack settles, reporting events; its final status and the events.

        The status is read before the events, so the events of a settled stack are
        complete when the loop ends.
        """
        deadline = self.clock() + self.timeout
        events: list[StackEvent] = []
        while True:
            stack = self.describe(stack_id)
            status = "DELETE_COMPLETE" if stack is None else str(stack["StackStatus"])
            fresh = self._events_since(stack_id, seen)
            for event in fresh:
                if self.on_event is not None:
                    self.on_event(event)
            events += fresh
            seen = fresh[-1].event_id if fresh else seen
            if is_settled(status):
                return status, events
            if self.clock() >= deadline:
                raise self._timed_out(status)
            self.sleep(self.poll_interval)

    def _events_since(self, stack_id: str, seen: str | None) -> list[StackEvent]:
        """Events newer than the one with id ``seen`` (all if ``None``), oldest first."""
        newest_first: list[StackEvent] = []
        request: dict[str, Any] = {"StackName": stack_id}
        while True:
            page = self.client.describe_stack_events(**request)
            for raw in page.get("StackEvents", []):
                event = StackEvent.from_reply(raw)
                if event.event_id == seen:
                    return newest_first[::-1]
                newest_first.append(event)
            if not page.get("NextToken"):
                return newest_first[::-1]
            request["NextToken"] = page["NextToken"]

    def _newest_event_id(self, stack_id: str) -> str | None:
        page = self.client.describe_stack_events(StackName=stack_id)
        events = page.get("StackEvents", [])
        return str(events[0]["EventId"]) if events else None

    def describe(self, stack: str) -> dict[str, Any] | None:
        """The stack (by name or id), or ``None`` if there is none."""
        try:
            stacks = self.client.describe_stacks(StackName=stack)["Stacks"]
        except ClientError as error:
            if "does not exist" in _message(error):
                return None
            raise
        return dict(stacks[0]) if stacks else None

    def _timed_out(self, status: str) -> StackDeployError:
        message = (
            f"Stack {self.stack_name!r} is still {status} after {self.timeout:.0f} s; "
            "CloudFormation carries on: follow it in the console"
        )
        return StackDeployError(self.stack_name, status, message)

    def _refused(self, action: str, error: ClientError) -> StackDeployError:
        message = f"CloudFormation refused to {action} stack {self.stack_name!r}: {_message(error)}"
        return StackDeployError(self.stack_name, None, message)


# Parameters whose default suits new stacks but not a stack deployed before them: there,
# readers of the release that deployed it may still run. ``RecordFormat`` 2 writes records
# that sqsjobs 0.1 cannot read, so an upgraded stack keeps 1 until told otherwise.
UPGRADE_DEFAULTS = {"RecordFormat": "1"}


def upgrade_defaults(
    declared: Mapping[str, Declared], previous: Mapping[str, str]
) -> dict[str, str]:
    """The values a stack updated to a template that first declares them starts with."""
    return {
        key: value
        for key, value in UPGRADE_DEFAULTS.items()
        if key in declared and key not in previous
    }


def stack_policy(template: str) -> str | None:
    """The stack policy for a stack of ``template`` (JSON), ``None`` if nothing needs it.

    A stack policy denies every update it does not allow, hence the first statement.
    """
    protected = PROTECTED.get(template, ())
    if not protected:
        return None
    allow_all = {"Effect": "Allow", "Principal": "*", "Action": "Update:*", "Resource": "*"}
    keep = {
        "Effect": "Deny",
        "Principal": "*",
        "Action": ["Update:Replace", "Update:Delete"],
        "Resource": [f"LogicalResourceId/{logical_id}" for logical_id in protected],
    }
    return json.dumps({"Statement": [allow_all, keep]}, indent=2)


def tag_list(tags: Mapping[str, str]) -> list[dict[str, str]]:
    """Tags as CloudFormation takes them, sorted by key."""
    return [{"Key": key, "Value": tags[key]} for key in sorted(tags)]


def outputs(stack: Mapping[str, Any]) -> dict[str, str]:
    """A described stack's outputs as ``{OutputKey: OutputValue}``."""
    return {str(o["OutputKey"]): str(o["OutputValue"]) for o in stack.get("Outputs", [])}


def _message(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Message", ""))
