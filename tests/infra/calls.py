"""What a role's code sends to AWS, as IAM sees it: actions on resource ARNs.

``Recorder`` notes every request the store's transports send (boto3 and aioboto3 alike,
patched in by the ``recorder`` fixture) that names one of a deployed stack's resources,
while a role's window is open; the emulator's request counter says what was served in
that window, so a request that went around the transports would show up as a mismatch.
``Deployed.granted`` reads a role's managed policy back from the emulator's IAM, with
every reference resolved, for comparison; ``Deployed.request`` turns a request into
what IAM evaluates (``tests/infra/iam.py``), since the emulator enforces no policy.

A ``TransactWriteItems`` is noted as IAM authorises it: one request per entry on the
stack's table, each of its own action (a ``Put`` is ``dynamodb:PutItem``) with its own
condition keys; entries on other tables (an application's own, in
``enqueue_in_transaction``) are for the application's own policy, not the stack's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3  # type: ignore[import-untyped]

from sqsjobs.aws.wire.protocol import Call
from sqsjobs.testing import RequestCounts
from tests.aws.emulator import COUNTER

from .iam import TRANSACT_WRITE, Context, Request, dynamodb_context, transaction_entries

TABLE_KEY = "pk"  # the job table's partition key

# Batch calls are authorised by their single-message action.
BATCH_ACTIONS = {
    "SendMessageBatch": "SendMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}


def action_name(operation: str) -> str:
    """botocore's ``list_dead_letter_source_queues`` as the API's ``ListDeadLetterSourceQueues``."""
    return "".join(part.capitalize() for part in operation.split("_"))


def iam_action(service: str, action: str) -> str:
    return f"{service}:{BATCH_ACTIONS.get(action, action)}"


@dataclass(frozen=True)
class Sent:
    service: str
    action: str  # the API's name: PutItem
    resource: str  # the ARN IAM authorises it on
    params: Mapping[str, Any]
    # The request that carried it, when it is an entry of one: TransactWriteItems.
    enclosing: str | None = None

    @property
    def grant(self) -> tuple[str, str]:
        return iam_action(self.service, self.action), self.resource

    @property
    def served(self) -> tuple[str, str]:
        """The request as the emulator served (and counted) it."""
        return self.service, self.enclosing or self.action


@dataclass(frozen=True)
class Grant:
    """One (action, resource) a policy allows, and the statement's condition, if any."""

    action: str
    resource: str
    condition: Mapping[str, Any] | None


@dataclass(frozen=True)
class Deployed:
    """A stack deployed from ``sqsjobs.yaml`` into the emulator."""

    name: str
    outputs: dict[str, str]
    stack_id: str
    endpoint: str

    @property
    def table(self) -> str:
        return self.outputs["TableName"]

    @property
    def queue_url(self) -> str:
        return self.outputs["QueueUrls"].partition("=")[2]

    @property
    def dead_letter_url(self) -> str:
        return self.outputs["DeadLetterQueueUrls"].partition("=")[2]

    def env(self) -> dict[str, str]:
        """What a Lambda function or an operator's shell gets: no DLQ URLs, so the store
        finds each DLQ through its queue's redrive policy (``GetQueueUrl``)."""
        return {
            "SQSJOBS_TABLE": self.table,
            "SQSJOBS_QUEUES": self.outputs["QueueUrls"],
            "AWS_ENDPOINT_URL": self.endpoint,
        }

    def resource(self, call: Call) -> str | None:
        """The ARN ``call`` acts on, if it is one of this stack's resources."""
        params = call.params
        if call.service == "dynamodb" and set(params.get("RequestItems", {})) == {self.table}:
            params = {"TableName": self.table}  # BatchGetItem: one table's items
        if call.service == "dynamodb" and params.get("TableName") == self.table:
            # arn:{partition}:sqs:{region}:{account}:{name}: the table's are the same.
            _, partition, _, region, account, _ = self.outputs["QueueArn"].split(":")
            table = f"arn:{partition}:dynamodb:{region}:{account}:table/{self.table}"
            return f"{table}/index/{params['IndexName']}" if "IndexName" in params else table
        if call.service == "sqs":
            arns = {
                self.queue_url: self.outputs["QueueArn"],
                self.dead_letter_url: self.outputs["DeadLetterQueueArn"],
            }
            if self.outputs.get("PriorityLaneUrls"):  # the lane: the queue's ARN, its name
                lane_url = self.outputs["PriorityLaneUrls"].partition("=")[2]
                account = self.outputs["QueueArn"].rsplit(":", 1)[0]
                arns[lane_url] = f"{account}:{lane_url.rsplit('/', 1)[1]}"
            if "QueueName" in params:  # GetQueueUrl
                by_name = {arn.rsplit(":", 1)[1]: arn for arn in arns.values()}
                return by_name.get(params["QueueName"])
            return arns.get(params.get("QueueUrl", ""))
        if call.service == "cloudformation" and params.get("StackName") == self.name:
            return self.stack_id
        return None

    def statements(self, policy: str) -> list[dict[str, Any]]:
        """The statements of the deployed ``{policy}PolicyArn``, every reference resolved."""
        iam = boto3.client("iam", endpoint_url=self.endpoint)
        arn = self.outputs[f"{policy}PolicyArn"]
        version = iam.get_policy(PolicyArn=arn)["Policy"]["DefaultVersionId"]
        document = iam.get_policy_version(PolicyArn=arn, VersionId=version)["PolicyVersion"]
        return list(document["Document"]["Statement"])

    def request(self, sent: Sent) -> Request:
        """``sent`` as IAM authorises it: its action, resource and condition keys."""
        context: Context = {}
        if sent.service == "dynamodb":
            context = dynamodb_context(sent.action, sent.params, TABLE_KEY, sent.enclosing)
        return Request(iam_action(sent.service, sent.action), sent.resource, context)

    def sends(self, call: Call) -> list[Sent]:
        """What ``call`` asks of this stack's resources, as IAM authorises it: the call
        itself, or each entry of a transaction on the stack's table; nothing if it names
        none of them."""
        action = action_name(call.operation)
        if call.service == "dynamodb" and action == TRANSACT_WRITE:
            entries = [
                (entry, params, self.resource(Call("dynamodb", "", params)))
                for entry, params in transaction_entries(call.params)
            ]
            return [
                Sent("dynamodb", entry, resource, params, enclosing=action)
                for entry, params, resource in entries
                if resource is not None
            ]
        resource = self.resource(call)
        return [] if resource is None else [Sent(call.service, action, resource, call.params)]

    def sent(self, call: Call) -> Sent:
        """A call built here (not sent) as the recorder would have noted it: one request."""
        (found,) = self.sends(call)
        return found

    def granted(self, policy: str) -> list[Grant]:
        """The (action, resource) pairs of the deployed ``{policy}PolicyArn``."""
        grants: list[Grant] = []
        for statement in self.statements(policy):
            assert set(statement) <= {"Sid", "Effect", "Action", "Resource", "Condition"}
            assert statement["Effect"] == "Allow"
            grants += [
                Grant(action, resource, statement.get("Condition"))
                for action in _listed(statement["Action"])
                for resource in _listed(statement["Resource"])
            ]
        return grants


def _listed(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


@dataclass
class Usage:
    """What one role's window saw: the requests sent, and the emulator's counts."""

    sent: list[Sent] = field(default_factory=list)
    served: RequestCounts = field(default_factory=RequestCounts.none)

    def grants(self) -> set[tuple[str, str]]:
        return {sent.grant for sent in self.sent}

    def actions(self) -> set[str]:
        return {action for action, _ in self.grants()}

    def calls(self, action: str) -> list[Sent]:
        return [sent for sent in self.sent if sent.action == action]


class Recorder:
    """Every request naming ``stack``'s resources that the transports send in a window."""

    def __init__(self, stack: Deployed) -> None:
        self.stack = stack
        self._sent: list[Sent] = []
        self._on = False
        self._lock = threading.Lock()

    def note(self, call: Call) -> None:
        if self._on:
            found = self.stack.sends(call)
            with self._lock:
                self._sent += found

    @contextmanager
    def role(self) -> Iterator[Usage]:
        usage = Usage()
        before = COUNTER.counts()
        start = len(self._sent)
        self._on = True
        try:
            yield usage
        finally:
            self._on = False
            usage.served = COUNTER.counts() - before
            with self._lock:
                usage.sent = self._sent[start:]
