"""The worker's log formatters on records no well-behaved caller writes.

The CLI tests read a real worker's output; these cover what is hard to provoke there:
an ``extra`` that JSON cannot hold or that names a formatter's own key, a traceback that
quotes credentials, the separators ``json.dumps`` leaves raw, values that need quoting.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from sqsjobs.observe.log_format import JsonFormatter, TextFormatter
from tests.support.clock import REALISTIC_START


def record(message: str, *, exc: bool = False, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord(
        "sqsjobs", logging.WARNING, __file__, 1, message, None, sys.exc_info() if exc else None
    )
    made.created = REALISTIC_START
    made.__dict__.update(extra)
    return made


def test_json_keeps_its_own_keys_and_writes_what_json_cannot_hold_as_text() -> None:
    at = datetime(2026, 12, 1, 10, 31, 4, tzinfo=UTC)
    line = JsonFormatter().format(record("Charged", level="forged", amount=Decimal("9.99"), at=at))
    written = json.loads(line)
    assert written["level"] == "WARNING"
    assert (written["amount"], written["at"]) == ("9.99", "2026-12-01 10:31:04+00:00")
    assert written["timestamp"] == "2026-12-01T03:12:21.243Z"  # REALISTIC_START in UTC


@pytest.mark.parametrize(
    "separator", ["\u0085", "\u2028", "\u2029", "\x9b", "\x7f", "\u202e", "\u2067", "\u200f"]
)
def test_json_escapes_what_json_dumps_leaves_raw(separator: str) -> None:
    line = JsonFormatter().format(record(f"a{separator}b", tenant=f"t{separator}"))
    assert len(line.splitlines()) == 1 and separator not in line
    written = json.loads(line)
    assert (written["message"], written["tenant"]) == (f"a{separator}b", f"t{separator}")


def test_a_traceback_loses_its_url_credentials_in_both_formats() -> None:
    try:
        raise ConnectionError("http://AKIAEXAMPLE:s3cret@db.internal:5432/ refused")
    except ConnectionError:
        made = record("Could not reach the database", exc=True)
    written = json.loads(JsonFormatter().format(made))["exception"]
    assert written.endswith("ConnectionError: http://***@db.internal:5432/ refused")
    text = TextFormatter().format(made)
    assert "s3cret" not in text and "s3cret" not in written
    assert text.splitlines()[-1] == "    ConnectionError: http://***@db.internal:5432/ refused"


def test_text_quotes_a_field_value_that_would_read_as_several() -> None:
    made = record(
        "Noted", job_id="0f3a9c", job_name="mail.send", queue="default", attempt=2, tenant="a b"
    )
    assert (
        TextFormatter()
        .format(made)
        .endswith(' Noted job_id=0f3a9c job_name=mail.send queue=default attempt=2 tenant="a b"')
    )
    for value, shown in [("x=1", '"x=1"'), ('say "hi"', '"say \\"hi\\""'), ("a\nb", '"a\\nb"')]:
        assert TextFormatter().format(record("m", tenant=value)).endswith(f" tenant={shown}")
    assert TextFormatter().format(record("m", tenant=None)).endswith(": m")


def test_text_shows_bidi_controls_as_escapes_in_the_message_and_the_fields() -> None:
    """``\\u202e`` would show "payout_exe.pdf" for "payout_\\u202efdp.exe" on a terminal."""
    made = record(
        "Job 'mail.send' failed: payout_\u202efdp.exe",
        job_id="0f3a9c",
        job_name="mail.send",
        tenant="acme\u2066x",
    )
    line = TextFormatter().format(made)
    assert "\u202e" not in line and "\u2066" not in line
    assert line.endswith(
        ": Job 'mail.send' failed: payout_\\u202efdp.exe job_id=0f3a9c job_name=mail.send"
        ' tenant="acme\\u2066x"'
    )
