"""Text others control, as sqsjobs stores and logs it: one line, no URL credentials."""

from __future__ import annotations

import logging

import pytest

from sqsjobs._errors import MAX_ERROR_CHARS, describe_error
from sqsjobs._log import Event, log_event
from sqsjobs._text import escape_controls, redact_credentials, safe_line


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("bad\nINFO forged\r\n", "bad\\nINFO forged\\r\\n"),
        ("\x1b[2K\x1b[1AERROR forged", "\\x1b[2K\\x1b[1AERROR forged"),
        ("nul\x00 del\x7f csi\x9b nel\x85", "nul\\x00 del\\x7f csi\\x9b nel\\x85"),
        ("ls\u2028ps\u2029end", "ls\\u2028ps\\u2029end"),
        ("tab\tkept, Zoë's C:\\new\\dir kept", "tab\tkept, Zoë's C:\\new\\dir kept"),
    ],
)
def test_control_characters_are_shown_as_escapes(raw: str, shown: str) -> None:
    assert escape_controls(raw) == shown
    assert escape_controls(shown) == shown
    assert shown.splitlines() == [shown]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (
            'Could not connect to the endpoint URL: "http://AKIAEXAMPLE:s3cr%2Ft@127.0.0.1:4566/"',
            'Could not connect to the endpoint URL: "http://***@127.0.0.1:4566/"',
        ),
        ("redis://:hunter2@cache.internal:6379/0", "redis://***@cache.internal:6379/0"),
        (
            "GET https://bucket.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Credential=AKIAEXAMPLE%2F20300101%2Feu-west-1&x-amz-security-token=FQoG"
            "&X-Amz-Signature=0a1b2c failed",
            "GET https://bucket.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Credential=***&x-amz-security-token=***&X-Amz-Signature=*** failed",
        ),
        (
            "https://api.example.invalid/v1?AWSAccessKeyId=AKIA1&Signature=x%2By&api_key=k1",
            "https://api.example.invalid/v1?AWSAccessKeyId=***&Signature=***&api_key=***",
        ),
        (
            "mail ana@example.com about https://example.invalid/a@b?page=2&sort=name",
            "mail ana@example.com about https://example.invalid/a@b?page=2&sort=name",
        ),
    ],
)
def test_credentials_in_urls_are_redacted(raw: str, shown: str) -> None:
    assert redact_credentials(raw) == shown
    assert redact_credentials(shown) == shown


def test_the_error_text_is_capped_after_escaping() -> None:
    text = describe_error(RuntimeError("\n" * MAX_ERROR_CHARS))
    assert len(text) == MAX_ERROR_CHARS and text.endswith("…")
    assert text.startswith("RuntimeError: \\n\\n") and "\n" not in text


def test_log_event_keeps_every_caller_s_message_and_fields_on_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("sqsjobs.test_text")
    with caplog.at_level(logging.INFO, logger="sqsjobs.test_text"):
        log_event(
            logger,
            logging.WARNING,
            Event.CLAIM_FAILED,
            "Claim failed (https://u:p@sqs.invalid/q)\nINFO forged",
            error="x\ry",
            delay=1.7961e-3,
        )
    [record] = caplog.records
    assert record.getMessage() == "Claim failed (https://***@sqs.invalid/q)\\nINFO forged"
    assert (record.__dict__["error"], record.__dict__["delay"]) == ("x\\ry", 1.7961e-3)
    assert record.__dict__["event"] == "jobs.worker.claim_failed"
    assert safe_line(record.getMessage()) == record.getMessage()
