"""botocore's failures as the protocol's ``AwsError``: the one place AWS error codes are read."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import (  # type: ignore[import-untyped]
    BotoCoreError,
    ClientError,
    HTTPClientError,
    InvalidConfigError,
    NoCredentialsError,
    NoRegionError,
    ParamValidationError,
    PartialCredentialsError,
    ProfileNotFound,
)
from botocore.exceptions import ConnectionError as BotoConnectionError
from botocore.parsers import ResponseParserError  # type: ignore[import-untyped]

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


# Everything else botocore raises instead of sending a request, or instead of an answer
# it can read: signing with no credentials, a credential provider failing to refresh, a
# profile that does not exist, an endpoint that answered but is no AWS (a wrong port, a
# proxy's page). Each is an AWS failure to the caller, a ``JobStoreError`` like any other.
SDK_FAILURES: tuple[type[Exception], ...] = (BotoCoreError, ResponseParserError)
# Those of them that no later try of the same call can get past until someone changes the
# configuration. A provider that failed to refresh (``CredentialRetrievalError``,
# ``TokenRetrievalError``: a metadata endpoint's blip, an SSO token being renewed) is
# not among them.
FINAL_SDK_FAILURES: tuple[type[Exception], ...] = (
    NoCredentialsError,
    PartialCredentialsError,
    ProfileNotFound,
    NoRegionError,
    InvalidConfigError,
    ParamValidationError,
    ResponseParserError,
)


def sdk_failure(error: Exception, operation: str) -> AwsError:
    final = isinstance(error, FINAL_SDK_FAILURES)
    return AwsError(type(error).__name__, str(error), operation, error, retryable=not final)


class NotAwsAnswer(Exception):
    """A success answer that no AWS API gives (an HTML page, plain text): something that
    is not AWS answered at the endpoint. botocore takes such a page for an empty success
    of DynamoDB's and SQS's JSON APIs, so a ``PutItem`` or a ``SendMessage`` would seem to
    have been done although nothing was written or sent."""

    def __init__(self, endpoint: str, content_type: str) -> None:
        super().__init__(
            f"{endpoint} answered with {content_type!r}, which no AWS API sends: "
            "something other than AWS answers there (a wrong endpoint URL or port, a proxy)"
        )
        self.endpoint = endpoint


def from_aws(reply: dict[str, Any], endpoint: str, operation: str) -> dict[str, Any]:
    """``reply`` if what answered can be AWS (JSON or XML, or no content type said)."""
    headers = reply.get("ResponseMetadata", {}).get("HTTPHeaders", {})
    kind = str(headers.get("content-type", "json"))
    if "json" in kind or "xml" in kind:
        return reply
    answer = NotAwsAnswer(endpoint, kind)
    raise AwsError("NotAwsAnswer", str(answer), operation, answer, retryable=False)
