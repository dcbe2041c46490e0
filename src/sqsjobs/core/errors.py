"""The errors sqsjobs raises to its callers, all in one place.

    Exception
     └── JobError                          the root: ``except JobError`` catches every one
          ├── JobConfigError (ValueError)  bad input or configuration; nothing was written
          ├── JobIdempotencyConflictError  a key was reused with a different name, tenant or payload
          ├── JobFatalError                raised by a handler: dead-letter now, never retry
          ├── JobTimeoutError              recorded when an attempt overruns its timeout
          ├── JobBatchError                enqueue_many stopped part-way; `results` were written
          ├── JobTransactionError          enqueue_in_transaction's transaction was cancelled
          └── JobStoreError                the store's backend refused a call, or never answered
               └── JobStoreThrottledError  ... throttling it through every retry of the SDK

``JobError`` itself is never raised (instantiating it is a ``TypeError``, as h11 does
with its ``ProtocolError``): an error a caller can catch names what went wrong.
Every error but ``JobBatchError`` (whose cause says why) carries a machine-readable
``code``; each carries the fields a caller needs to act on it, and its message says
what was wrong and what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .text import safe_line

if TYPE_CHECKING:
    from .requests import EnqueueResult

ConfigErrorCode = Literal[
    "invalid_event",  # a Lambda handler was given an event of another kind
    "invalid_name",
    "invalid_option",
    "invalid_payload",
    "payload_too_large",
    "store_required",
    "store_full",
    "unknown_handler",
]

MAX_ERROR_CHARS = 2000


class JobError(Exception):
    """The root of every error sqsjobs raises to its callers; only its subclasses are raised."""

    def __init__(self, *args: object) -> None:
        if type(self) is JobError:
            raise TypeError("JobError is abstract: raise one of its subclasses")
        super().__init__(*args)


class JobConfigError(JobError, ValueError):
    """Input or configuration that sqsjobs refuses, raised before anything is written."""

    code: ConfigErrorCode

    def __init__(self, code: ConfigErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


class JobIdempotencyConflictError(JobError):
    """The idempotency key is bound to another job whose name, tenant or payload differ.

    A key is bound to the first request's fingerprint for as long as that job's record
    exists, so a retried producer with the same request is harmless while a different
    request under the same key is refused rather than silently dropped.
    """

    code: Literal["idempotency_conflict"] = "idempotency_conflict"

    def __init__(self, key: str, existing_job_id: str) -> None:
        super().__init__(
            f"Idempotency key {key!r} is already bound to job {existing_job_id!r} with a "
            "different name, tenant or payload; reuse a key only for the same request."
        )
        self.key = key
        self.existing_job_id = existing_job_id


class JobFatalError(JobError):
    """Raise in a handler when no retry can succeed: the job is dead-lettered at once."""

    code: Literal["fatal"] = "fatal"


class JobTimeoutError(JobError):
    """An attempt ran longer than the job's ``timeout``; recorded as a retryable failure."""

    code: Literal["timeout"] = "timeout"

    def __init__(self, timeout: float) -> None:
        super().__init__(f"Job exceeded its timeout of {timeout:g}s and was cancelled.")
        self.timeout = timeout


class JobBatchError(JobError):
    """``enqueue_many`` failed part-way; ``results`` holds the requests written before it.

    Raised ``from`` the store's error, so the cause says why the rest was not written.
    """

    def __init__(self, results: list[EnqueueResult], message: str) -> None:
        super().__init__(message)
        self.results = results


class JobTransactionError(JobError):
    """``enqueue_in_transaction``'s transaction was cancelled: nothing of it was written.

    ``reasons`` are AWS's ``CancellationReasons`` as it gave them (``Code``, ``Message``
    and, for a failed condition, ``Item``), one per entry of the transaction: the
    application's ``items`` first, in their order, then one per job record.
    ``item_reasons`` are those of the application's items alone. ``retryable``: every
    failed entry met another transaction or throttling, so the same call may pass later.
    """

    code: Literal["transaction_cancelled"] = "transaction_cancelled"

    def __init__(self, reasons: Sequence[Mapping[str, Any]], items: int) -> None:
        self.reasons = tuple(reasons)
        self.item_reasons = self.reasons[:items]
        refused = [(index, reason) for index, reason in enumerate(self.reasons) if failed(reason)]
        said = "; ".join(
            f"{_entry(index, items)}: {reason.get('Code')}"
            + (f" ({reason['Message']})" if reason.get("Message") else "")
            for index, reason in refused
        )
        super().__init__(f"Transaction cancelled, nothing was written: {said or 'no reason given'}")
        self.retryable = bool(refused) and all(
            reason.get("Code") in TRANSIENT_CANCELLATIONS for _, reason in refused
        )


# Cancellation codes that a later try of the same transaction can get past.
TRANSIENT_CANCELLATIONS = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"}
)


def failed(reason: Mapping[str, Any]) -> bool:
    """Whether an entry's cancellation reason says it failed (``Code`` other than "None")."""
    return reason.get("Code") not in (None, "None")


def _entry(index: int, items: int) -> str:
    return f"item {index}" if index < items else f"job {index - items}"


class JobStoreError(JobError):
    """A store call that the backend refused, or never answered, after the SDK's retries.

    ``operation`` names the call (``"PutItem"``), ``code`` the backend's error code
    (``"ValidationException"``, or the exception's name when nothing answered) and
    ``retryable`` whether the same call may pass later (throttling, a 5xx, no answer) or
    not (refused as invalid or not allowed). The SDK's exception (botocore's
    ``ClientError``, ``EndpointConnectionError``, ...) is ``__cause__``.
    """

    def __init__(self, operation: str, code: str, message: str, *, retryable: bool) -> None:
        super().__init__(f"{operation}: {code}: {message}" if message else f"{operation}: {code}")
        self.operation = operation
        self.code = code
        self.retryable = retryable


class JobStoreThrottledError(JobStoreError):
    """The backend kept throttling the call through the SDK's retries: back off first."""


# AWS error codes of a 4xx answer that a later try of the same request can get past.
RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "ThrottledException",
        "TransactionInProgressException",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)


# Codes that say the request itself is wrong, whoever sends it and whenever: too large,
# malformed, naming what cannot be. An expired token, a denied action, a KMS key
# being rotated, no credentials: each of those may pass in seconds (a credential
# rollover, an IAM change propagating), so none is here.
INVALID_REQUEST_CODES = frozenset(
    {
        "ValidationException",
        "SerializationException",
        "ItemCollectionSizeLimitExceededException",
        "InvalidParameterValue",
        "InvalidParameterCombination",
        "MissingParameter",
        "MissingRequiredParameter",
        "InvalidAttributeValue",
        "InvalidAttributeName",
        "UnsupportedOperation",
        "ParamValidationError",
        "UnreadableRecord",
    }
)


def refused_for_good(error: BaseException) -> bool:
    """Whether ``error`` says the request itself is wrong (``INVALID_REQUEST_CODES``): no
    later try of the same call can pass. Read from a ``JobStoreError``'s ``code`` or an
    AWS answer's (botocore's ``ClientError``, read by its ``response``)."""
    code = getattr(error, "code", None)
    if not isinstance(code, str):
        response = getattr(error, "response", None)
        code = response.get("Error", {}).get("Code") if isinstance(response, dict) else None
    return code in INVALID_REQUEST_CODES


def retryable(error: BaseException) -> bool:
    """Whether trying the same store call again may succeed.

    An error that says (a ``retryable`` attribute) is taken at its word. An AWS answer in
    the 4xx range (botocore's ``ClientError``, read by its ``response`` without importing
    botocore) is final unless it is throttling or a timeout: the request itself is
    refused (invalid, too large, not allowed). Anything else (5xx, no response at all, a
    store of another kind) may pass on a later try.
    """
    said = getattr(error, "retryable", None)
    if isinstance(said, bool):
        return said
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return True
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    code = response.get("Error", {}).get("Code")
    if not isinstance(status, int) or not 400 <= status < 500:
        return True
    return code in RETRYABLE_CODES


def describe_error(error: BaseException) -> str:
    """The ``last_error`` text for a failure: ``"ExcName: message"``, capped in length.

    Also the ``error`` of every log record about a failure, so it is one line with no
    URL credentials (see ``text``) whoever wrote the message.
    """
    text = safe_line(f"{type(error).__name__}: {error}")
    if len(text) > MAX_ERROR_CHARS:
        return text[: MAX_ERROR_CHARS - 1] + "…"
    return text
