"""The lean path's SigV4 (``transports.lean_sign``) against botocore's ``SigV4Auth``.

The emulator verifies no signature, so the lean signer is held to botocore's own: for
the same time, credentials, URL, headers and body, the headers it adds (date, token,
``Authorization``) must be exactly those ``SigV4Auth.add_auth`` adds.
"""

from __future__ import annotations

import datetime
import json
import time

import pytest
from botocore.auth import SIGV4_TIMESTAMP, SigV4Auth  # type: ignore[import-untyped]
from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
from botocore.credentials import Credentials  # type: ignore[import-untyped]
from hypothesis import given
from hypothesis import strategies as st

from sqsjobs.aws.transports.lean_sign import Signer, plan, timestamp

DYNAMODB_HEADERS = (
    ("X-Amz-Target", "DynamoDB_20120810.UpdateItem"),
    ("Content-Type", "application/x-amz-json-1.0"),
    ("User-Agent", "Botocore/1.35.36 ua/2.0 os/linux#6.1 md/arch#x86_64 lang/python#3.11.7"),
)
SQS_HEADERS = (
    ("X-Amz-Target", "AmazonSQS.ReceiveMessage"),
    ("Content-Type", "application/x-amz-json-1.0"),
    ("x-amzn-query-mode", "true"),
    ("User-Agent", "Botocore/1.35.36"),
)


def moment(seconds: float) -> datetime.datetime:
    """A naive UTC datetime, as botocore's ``get_current_datetime`` returns."""
    aware = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return aware.replace(tzinfo=None)


def botocore_signed(
    url: str,
    headers: tuple[tuple[str, str], ...],
    body: bytes,
    credentials: Credentials,
    region: str,
    service: str,
    now: datetime.datetime,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """What ``SigV4Auth.add_auth`` adds to a request with ``headers``, at ``now``."""
    monkeypatch.setattr("botocore.auth.get_current_datetime", lambda: now)
    request = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
    SigV4Auth(credentials.get_frozen_credentials(), service, region).add_auth(request)
    given = {name for name, _ in headers}
    return {name: value for name, value in request.headers.items() if name not in given}


def body_of(tenant: str, seconds: float) -> bytes:
    return json.dumps(
        {
            "TableName": "jobs-prod",
            "Key": {"pk": {"S": f"job#{tenant}#01JD8Z"}},
            "ExpressionAttributeValues": {":now": {"N": repr(seconds)}, ":t": {"S": "ünï"}},
        }
    ).encode()


CASES = [
    ("https://dynamodb.eu-west-3.amazonaws.com/", DYNAMODB_HEADERS, "eu-west-3", "dynamodb"),
    ("https://sqs.ap-southeast-2.amazonaws.com/", SQS_HEADERS, "ap-southeast-2", "sqs"),
    ("http://127.0.0.1:50123", DYNAMODB_HEADERS, "us-east-1", "dynamodb"),
    (
        "https://vpce-0a1b.sqs.us-west-2.vpce.amazonaws.com/a//b/../c%20d?x=2&a=1",
        (*SQS_HEADERS, ("X-Custom", "  two   spaced  words ")),
        "us-west-2",
        "sqs",
    ),
]


@pytest.mark.parametrize(("url", "headers", "region", "service"), CASES)
@pytest.mark.parametrize("token", [None, "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJH"])
def test_the_lean_signature_is_botocores(
    url: str,
    headers: tuple[tuple[str, str], ...],
    region: str,
    service: str,
    token: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzEXAMPLE"
    credentials = Credentials("AKIAIOSFODNN7EXAMPLE", secret, token)
    signer, route = Signer(), plan(url, headers, region, service)
    seconds = time.time()
    for tenant, offset in (("acme", 0.0), ("globex", 1.37), ("acme", 86_400.2)):
        now, body = moment(seconds + offset), body_of(tenant, seconds + offset)
        expected = botocore_signed(
            url, headers, body, credentials, region, service, now, monkeypatch
        )
        frozen = credentials.get_frozen_credentials()
        assert signer.headers(route, frozen, body, now) == expected


def test_a_new_secret_or_day_derives_a_new_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept signing key is never used for another day, region, service or secret."""
    url, headers = CASES[0][0], CASES[0][1]
    signer = Signer()
    seconds = time.time()
    rotated = [
        (Credentials("AKIAOLD", "old/secret+1"), "eu-west-3", "dynamodb", 0.0),
        (Credentials("AKIANEW", "new/secret+2"), "eu-west-3", "dynamodb", 3.1),
        (Credentials("AKIANEW", "new/secret+2"), "eu-west-3", "dynamodb", 86_400.5),
        (Credentials("AKIANEW", "new/secret+2"), "us-east-2", "dynamodb", 86_401.5),
        (Credentials("AKIANEW", "new/secret+2"), "us-east-2", "sqs", 86_402.5),
    ]
    for credentials, region, service, offset in rotated:
        now, body = moment(seconds + offset), body_of("initech", seconds)
        expected = botocore_signed(
            url, headers, body, credentials, region, service, now, monkeypatch
        )
        route = plan(url, headers, region, service)
        added = signer.headers(route, credentials.get_frozen_credentials(), body, now)
        assert added == expected


@given(st.datetimes(min_value=datetime.datetime(1970, 1, 1)))
def test_the_timestamp_is_the_one_strftime_writes(now: datetime.datetime) -> None:
    assert timestamp(now) == now.strftime(SIGV4_TIMESTAMP)
