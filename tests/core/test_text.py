"""Text others control, as sqsjobs stores and logs it: one line, no URL credentials."""

from __future__ import annotations

import json
import logging
import unicodedata

import pytest

from sqsjobs.core.errors import MAX_ERROR_CHARS, describe_error
from sqsjobs.core.text import escape_controls, escape_json_controls, redact_credentials, safe_line
from sqsjobs.observe.log import Event, log_event

BIDI_CONTROLS = [
    "\u061c",
    "\u200e",
    "\u200f",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
]


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("bad\nINFO forged\r\n", "bad\\nINFO forged\\r\\n"),
        ("\x1b[2K\x1b[1AERROR forged", "\\x1b[2K\\x1b[1AERROR forged"),
        ("nul\x00 del\x7f csi\x9b nel\x85", "nul\\x00 del\\x7f csi\\x9b nel\\x85"),
        ("ls\u2028ps\u2029end", "ls\\u2028ps\\u2029end"),
        ("tab\tkept, Zoë's C:\\new\\dir kept", "tab\tkept, Zoë's C:\\new\\dir kept"),
        # Bidi controls reorder what a terminal shows: "invoice_\u202efdp.exe" reads as
        # "invoice_exe.pdf". Every Bidi_Control character is escaped.
        ("invoice_\u202efdp.exe", "invoice_\\u202efdp.exe"),
        (
            "lre\u202a rle\u202b pdf\u202c lro\u202d rlo\u202e",
            "lre\\u202a rle\\u202b pdf\\u202c lro\\u202d rlo\\u202e",
        ),
        (
            "lri\u2066 rli\u2067 fsi\u2068 pdi\u2069",
            "lri\\u2066 rli\\u2067 fsi\\u2068 pdi\\u2069",
        ),
        ("lrm\u200e rlm\u200f alm\u061c", "lrm\\u200e rlm\\u200f alm\\u061c"),
        ("שלום عالم kept", "שלום عالم kept"),  # right-to-left text itself is left alone
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


def test_every_bidi_control_is_escaped_and_other_invisible_characters_are_kept() -> None:
    """The set is Unicode's Bidi_Control: every embedding, override and isolate (found
    by their bidi class, so none is missed) and the three marks."""
    explicit = {"LRE", "RLE", "PDF", "LRO", "RLO", "LRI", "RLI", "FSI", "PDI"}
    found = {chr(c) for c in range(0x110000) if unicodedata.bidirectional(chr(c)) in explicit}
    assert found | {"\u061c", "\u200e", "\u200f"} == set(BIDI_CONTROLS)
    for control in BIDI_CONTROLS:
        assert escape_controls(f"a{control}b") == f"a\\u{ord(control):04x}b"
    for kept in ("\u200b", "\u200d", "\ufeff", "\u05d0", "\u0627"):  # joiners, letters
        assert escape_controls(kept) == kept


@pytest.mark.parametrize("control", BIDI_CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_json_text_escapes_bidi_controls_and_still_reads_back_the_same(control: str) -> None:
    value = {"error": f"Ödeme {control}reddedildi", f"k{control}": [control]}
    text = escape_json_controls(json.dumps(value, ensure_ascii=False))
    assert control not in text and f"\\u{ord(control):04x}" in text
    assert json.loads(text) == value


def test_a_stored_error_holds_no_raw_bidi_control() -> None:
    text = describe_error(ValueError("refund of 10 \u202e05$ to Zoë refused"))
    assert text == "ValueError: refund of 10 \\u202e05$ to Zoë refused"
    assert safe_line(text) == text
