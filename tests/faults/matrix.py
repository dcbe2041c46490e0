"""The failure matrix's parts: the failures, how long they last, and the steps they hit.

A *failure* is what AWS (or the SDK, before a request leaves) answers: throttling, a
5xx, each credential and authorisation code, a refused request, an unexpected
conditional failure, a reset connection, a read timeout, a response lost after the
write applied, no credentials, a credential provider that fails to refresh. Server-side
ones come from the fault layer in front of the emulator (``faulty_aws``); the two
client-side ones from a ``before-sign`` handler on the store's own SDK sessions, which is
where botocore raises them (``ClientFaults``).

A *step* is one AWS call of a job's life, told apart on the wire by service, action and
a text only its request carries (a completion's ``UpdateItem`` sets ``#completed_at``, a
heartbeat's sets ``#lease_until = :lease_until``). Only that call fails; everything
else the run does passes.

A *duration* is how long it fails: one request (a blip), longer than the job's lease,
or until whoever makes the call stops (the worker's ``stop``, the end of the producer's
call, the Lambda invocation).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from botocore.exceptions import CredentialRetrievalError, NoCredentialsError

from .faulty_aws import Fault, FaultPlan

ServiceCodes = dict[str, str]


@dataclass(frozen=True)
class Failure:
    """One way a call fails: a fault layer answer, or an SDK error raised while signing."""

    name: str
    fault: Fault | None = None
    codes: ServiceCodes | None = None  # a CODED fault's code per service
    status: int = 400
    client: Callable[[], Exception] | None = None

    def __str__(self) -> str:
        return self.name


def _same(code: str) -> ServiceCodes:
    return {"dynamodb": code, "sqs": code}


FAILURES = (
    Failure("throttling", Fault.THROTTLE),
    Failure("500", Fault.SERVER_ERROR),
    Failure("503", Fault.CODED, _same("ServiceUnavailable"), 503),
    Failure("ExpiredToken", Fault.CODED, _same("ExpiredTokenException")),
    Failure("UnrecognizedClient", Fault.CODED, _same("UnrecognizedClientException")),
    Failure("InvalidClientTokenId", Fault.CODED, _same("InvalidClientTokenId"), 403),
    Failure(
        "AccessDenied", Fault.CODED, {"dynamodb": "AccessDeniedException", "sqs": "AccessDenied"}
    ),
    Failure(
        "KMSAccessDenied",
        Fault.CODED,
        {"dynamodb": "KMSAccessDeniedException", "sqs": "KmsAccessDenied"},
    ),
    Failure("Validation", Fault.CODED, _same("ValidationException")),
    Failure(
        "ConditionalCheckFailed",
        Fault.CODED,
        {"dynamodb": "ConditionalCheckFailedException", "sqs": "InvalidParameterValue"},
    ),
    Failure("connection-reset", Fault.DROP),
    Failure("read-timeout", Fault.SLOW),
    Failure("lost-response", Fault.LOST_RESPONSE),
    Failure("no-credentials", client=NoCredentialsError),
    Failure(
        "refresh-fails",
        client=lambda: CredentialRetrievalError(
            provider="sso", error_msg="the SSO session expired; run aws sso login"
        ),
    ),
)


class Duration(StrEnum):
    BLIP = "blip"  # one request
    BEYOND_LEASE = "beyond-lease"  # 1.5 leases of every such request
    UNTIL_STOP = "until-stop"  # until the caller stops (worker stop, call's end, invocation)


class Kind(StrEnum):
    PRODUCER = "producer"
    WORKER = "worker"
    LAMBDA = "lambda"
    RECONCILER = "reconciler"
    CRON = "cron"


@dataclass(frozen=True)
class Step:
    """One AWS call of a job's life, and the job whose life has it."""

    name: str
    kind: Kind
    service: str
    actions: frozenset[str]
    marker: str | None  # a text only this call's request body carries
    job: str  # the handler: "ok", "slow" (outlives heartbeats), "flaky", "fatal"

    def __str__(self) -> str:
        return self.name


CLAIM = "#attempts + :one"
HEARTBEAT = "#lease_until = :lease_until"
COMPLETION = "#completed_at = :now"
RETRY = "#run_at = :run_at, #last_error"
DEAD = "#copy_due = :now"
COPY = "dead-letter"
UPDATE, PUT = frozenset({"UpdateItem"}), frozenset({"PutItem"})
DELETES = frozenset({"DeleteMessage", "DeleteMessageBatch"})

WORKER_STEPS = (
    Step("receive", Kind.WORKER, "sqs", frozenset({"ReceiveMessage"}), None, "ok"),
    Step("claim", Kind.WORKER, "dynamodb", UPDATE, CLAIM, "ok"),
    Step("heartbeat", Kind.WORKER, "dynamodb", UPDATE, HEARTBEAT, "slow"),
    Step("completion", Kind.WORKER, "dynamodb", UPDATE, COMPLETION, "ok"),
    Step("failure", Kind.WORKER, "dynamodb", UPDATE, RETRY, "flaky"),
    Step("dead", Kind.WORKER, "dynamodb", UPDATE, DEAD, "fatal"),
    Step("dlq-copy", Kind.WORKER, "sqs", frozenset({"SendMessageBatch"}), COPY, "fatal"),
    Step("delete", Kind.WORKER, "sqs", DELETES, None, "fatal"),
)
PRODUCER_STEPS = (
    Step("put", Kind.PRODUCER, "dynamodb", PUT, '"queued"', "ok"),
    Step("send", Kind.PRODUCER, "sqs", frozenset({"SendMessage"}), None, "ok"),
)
LAMBDA_STEPS = (
    Step("lambda-claim", Kind.LAMBDA, "dynamodb", UPDATE, CLAIM, "ok"),
    Step("lambda-completion", Kind.LAMBDA, "dynamodb", UPDATE, COMPLETION, "ok"),
    Step("lambda-failure", Kind.LAMBDA, "dynamodb", UPDATE, RETRY, "flaky"),
    Step("lambda-dead", Kind.LAMBDA, "dynamodb", UPDATE, DEAD, "fatal"),
    Step("lambda-dlq-copy", Kind.LAMBDA, "sqs", frozenset({"SendMessageBatch"}), COPY, "fatal"),
)
OTHER_STEPS = (
    Step("reconcile", Kind.RECONCILER, "dynamodb", frozenset({"Query"}), None, "ok"),
    Step(
        "reconcile-send",
        Kind.RECONCILER,
        "sqs",
        frozenset({"SendMessage", "SendMessageBatch"}),
        None,
        "ok",
    ),
    Step("cron-tick", Kind.CRON, "dynamodb", PUT, "cron/", "ok"),
)
STEPS = WORKER_STEPS + PRODUCER_STEPS + LAMBDA_STEPS + OTHER_STEPS


def durations(step: Step) -> tuple[Duration, ...]:
    """A lease is a worker's: other callers fail for one request or for the whole call."""
    if step.kind is Kind.WORKER:
        return tuple(Duration)
    return (Duration.BLIP, Duration.UNTIL_STOP)


def plan(failure: Failure, step: Step, duration: Duration, delay: float) -> FaultPlan:
    """The fault layer's plan for a server-side failure of ``step``."""
    assert failure.fault is not None
    return FaultPlan(
        rate=1.0,
        kinds=(failure.fault,),
        services=frozenset({step.service}),
        actions=step.actions,
        body_contains=step.marker,
        limit=1 if duration is Duration.BLIP else None,
        delay=delay,
        code=(failure.codes or {}).get(step.service, "ValidationException"),
        status=failure.status,
    )


class ClientFaults:
    """Raises a client-side failure from ``before-sign`` on the sessions it is attached to,
    for the requests of one step, while it is on: as botocore raises a missing credential
    or a provider's failed refresh, before anything is sent."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._on: tuple[Failure, Step] | None = None
        self._left: int | None = None
        self.raised = 0

    def attach(self, session: Any) -> None:
        """Listen on a botocore or aiobotocore session (both take ``register``)."""
        session.register("before-sign", self._before_sign)

    def start(self, failure: Failure, step: Step, duration: Duration) -> None:
        with self._lock:
            self._on, self.raised = (failure, step), 0
            self._left = 1 if duration is Duration.BLIP else None

    def stop(self) -> None:
        with self._lock:
            self._on = None

    def _before_sign(self, event_name: str, request: Any = None, **_: Any) -> None:
        with self._lock:
            if self._on is None or self._left == 0:
                return
            failure, step = self._on
            parts = event_name.split(".")
            service, action = (parts[1], parts[2]) if len(parts) > 2 else ("", "")
            if service != step.service or action not in step.actions:
                return
            body = request.body if request is not None else b""
            text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
            if step.marker is not None and step.marker not in text:
                return
            if self._left is not None:
                self._left -= 1
            self.raised += 1
            assert failure.client is not None
            error = failure.client()
        raise error
