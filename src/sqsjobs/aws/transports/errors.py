"""botocore's failures as the protocol's ``AwsError``: the one place AWS error codes are read."""

from __future__ import annotations

from botocore.exceptions import ClientError, HTTPClientError  # type: ignore[import-untyped]
from botocore.exceptions import ConnectionError as BotoConnectionError

from ..wire.protocol import AwsError, ConditionFailed, Throttled

THROTTLING_CODES = frozenset(
    {
        "ThrottlingException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "ThrottledException",
    }
)


def translate(error: ClientError, operation: str) -> AwsError:
    """An AWS refusal (after botocore's retries) as the error a flow catches."""
    code = str(error.response.get("Error", {}).get("Code", "Unknown"))
    message = str(error.response.get("Error", {}).get("Message", ""))
    if code == "ConditionalCheckFailedException":
        return ConditionFailed(code, message, operation, error, error.response.get("Item"))
    if code in THROTTLING_CODES:
        return Throttled(code, message, operation, error)
    return AwsError(code, message, operation, error)


# What botocore raises when a request got no response at all (a refused or dropped
# connection, a read timeout) and its retries ran out: the standard retry mode's
# transient exceptions. As much an AWS failure as a 5xx, so flows see it as ``AwsError``
# (a batch reports what it wrote, a lost SQS call is left to come back on its own).
NO_RESPONSE: tuple[type[Exception], ...] = (BotoConnectionError, HTTPClientError)


def no_response(error: Exception, operation: str) -> AwsError:
    return AwsError(type(error).__name__, str(error), operation, error)
