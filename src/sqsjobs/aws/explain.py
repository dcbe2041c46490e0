"""What an AWS failure means for whoever set the store up: one line with the fix.

The failures an operator meets first (no region, no credentials, a profile, table, queue
or stack that does not exist, an endpoint that does not answer or is not AWS) are
``explained``: a line that names what is missing and the fix, instead of botocore's bare
words. The command line prints it as its ``error:`` line; the dashboard shows it when a
refresh fails. ``one_line`` is any other failure as one line.
"""

from __future__ import annotations

from botocore.exceptions import (  # type: ignore[import-untyped]
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
)
from botocore.parsers import ResponseParserError  # type: ignore[import-untyped]

from ..core.errors import JobError, JobStoreError
from ..core.text import safe_line
from .transports.errors import NotAwsAnswer

MAX_MESSAGE_CHARS = 300


def one_line(error: BaseException) -> str:
    """The error as a single line: what went wrong, without the stack.

    sqsjobs' own errors (every ``JobError``, a user's subclass too) already say what was
    wrong and what is allowed, so their message stands alone; anything else is prefixed
    with its type, since a bare ``KeyError`` message (``'name'``) means nothing by itself.
    A line too long loses its middle, not its end: it is most often a long value quoted
    in it, and the end says what is allowed (``Invalid job name '999…999': must match``).
    """
    text = safe_line(" ".join(str(error).split()))
    if not isinstance(error, JobError):
        text = f"{type(error).__name__}: {text}" if text else type(error).__name__
    if len(text) > MAX_MESSAGE_CHARS:
        half = (MAX_MESSAGE_CHARS - 1) // 2
        text = f"{text[:half]}…{text[-half:]}"
    return text or type(error).__name__


REGION_FIX = "pass --region REGION or set AWS_REGION (or AWS_DEFAULT_REGION)"
CREDENTIALS_FIX = (
    "set AWS_PROFILE to a profile with credentials (see `aws configure`), "
    "or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
)
NO_QUEUE = {"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"}
REFUSED_CREDENTIALS = {
    "UnrecognizedClientException",
    "InvalidClientTokenId",
    "ExpiredToken",
    "ExpiredTokenException",
    "InvalidSignatureException",
    "SignatureDoesNotMatch",
}


def explained(error: BaseException, target: dict[str, str]) -> str | None:
    """The fix for an AWS failure whose cause is the setup, not the command; else None.

    ``target`` is what the command reached for (``_config.remember``): ``stack``,
    ``table``, ``queues``, ``endpoint_url``, each there only if known.
    """
    text = _fix(_botocore_error(error), target)
    return None if text is None else " ".join(text.split())


def _fix(cause: BaseException, target: dict[str, str]) -> str | None:
    if isinstance(cause, NoRegionError):
        return f"No AWS region configured: {REGION_FIX}"
    if isinstance(cause, NoCredentialsError | PartialCredentialsError):
        return f"No AWS credentials found: {CREDENTIALS_FIX}"
    if isinstance(cause, EndpointConnectionError | ConnectTimeoutError):
        where = cause.kwargs.get("endpoint_url") or target.get("endpoint_url", "the AWS endpoint")
        return (
            f"Could not connect to {where}: check --endpoint-url (or AWS_ENDPOINT_URL) "
            "and --region, and that the endpoint is up"
        )
    if isinstance(cause, ProfileNotFound):
        profile = cause.kwargs.get("profile", "?")
        return (
            f"AWS profile {profile!r} does not exist: set AWS_PROFILE to one that "
            "`aws configure list-profiles` lists, or unset it"
        )
    if isinstance(cause, NotAwsAnswer | ResponseParserError):
        where = getattr(cause, "endpoint", None) or target.get("endpoint_url", "The endpoint")
        return (
            f"{where} answered, but not as AWS does: check --endpoint-url (or "
            "AWS_ENDPOINT_URL) and its port, and any proxy (HTTPS_PROXY) in between"
        )
    if isinstance(cause, ClientError):
        return _refusal(cause, target)
    return None


def _refusal(error: ClientError, target: dict[str, str]) -> str | None:
    code = str(error.response.get("Error", {}).get("Code", ""))
    message = str(error.response.get("Error", {}).get("Message", ""))
    stack = target.get("stack")
    if error.operation_name == "DescribeStacks" and "does not exist" in message:
        name = stack or "NAME"
        return (
            f"Stack {name!r} does not exist in this region: deploy it with "
            f"`sqsjobs infra deploy --stack {name}`, or check --stack (SQSJOBS_STACK) and --region"
        )
    where = f"stack {stack}'s" if stack else "SQSJOBS_TABLE's"
    if code == "ResourceNotFoundException" and "table" in target:
        return (
            f"Job table {target['table']!r} ({where}) does not exist in this region: check "
            "--region, or deploy it with `sqsjobs infra deploy --stack NAME`"
        )
    if code in NO_QUEUE:
        where = f"stack {stack}'s" if stack else "SQSJOBS_QUEUES's"
        queues = target.get("queues", "")
        return (
            f"A queue of this store ({where} {queues}) does not exist in this region: "
            "check --region, or deploy it with `sqsjobs infra deploy --stack NAME`"
        )
    if code in REFUSED_CREDENTIALS:
        return f"AWS refused the credentials ({code}): {CREDENTIALS_FIX}"
    return None


def _botocore_error(error: BaseException) -> BaseException:
    """botocore's own exception behind ``error``, which may wrap it (``AwsError.cause``,
    or a ``JobStoreError``'s ``__cause__``)."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException):
        return cause
    if isinstance(error, JobStoreError) and error.__cause__ is not None:
        return error.__cause__
    return error
