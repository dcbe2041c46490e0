"""The worker's log formatters, record by record.

The CLI tests read a real worker's output; these cover what is hard to provoke there:
an ``extra`` that JSON cannot hold or that names a formatter's own key, a traceback that
quotes credentials, the separators ``json.dumps`` leaves raw, values that need quoting,
and which of a record's fields a text line keeps (a handler's ``extra``, not what a
sqsjobs event's message already says).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from decimal import Decimal

import pytest

import sqsjobs
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


def test_json_says_which_release_wrote_every_line() -> None:
    written = json.loads(JsonFormatter().format(record("m", sqsjobs_version="forged")))
    assert written["sqsjobs_version"] == sqsjobs.__version__
    assert list(written)[:5] == ["timestamp", "level", "logger", "message", "sqsjobs_version"]


def test_text_keeps_a_handler_s_extra_after_the_job_fields() -> None:
    """``ctx.log.info("Building report", extra={"rows": 1204, "month": "2026-11"})``."""
    made = record(
        "Building report",
        rows=1204,
        month="2026-11",
        job_id="0f3a9c",
        job_name="report.build",
        queue="default",
        attempt=1,
        tenant=None,
        skipped=None,
    )
    assert (
        TextFormatter()
        .format(made)
        .endswith(
            ": Building report job_id=0f3a9c job_name=report.build queue=default attempt=1"
            " rows=1204 month=2026-11"
        )
    )


def test_text_escapes_and_quotes_extra_keys_and_values_on_one_line() -> None:
    made = record(
        "Noted", note="a\nb=c \u202e", **{"odd key": 'x"y', "at": datetime(2026, 12, 1, tzinfo=UTC)}
    )
    line = TextFormatter().format(made)
    assert len(line.splitlines()) == 1 and "\u202e" not in line
    assert line.endswith(
        ' Noted note="a\\nb=c \\u202e" "odd key"="x\\"y" at="2026-12-01 00:00:00+00:00"'
    )


def test_text_leaves_a_sqsjobs_event_s_fields_to_its_message() -> None:
    """An event's message says what its fields hold; a handler's own ``event`` is a field."""
    made = record(
        "Claimed job 'note' (0f3a9c), attempt 1 of 5",
        event="jobs.claim",
        worker_id="worker-3f9a",
        job_id="0f3a9c",
    )
    assert TextFormatter().format(made).endswith("attempt 1 of 5 job_id=0f3a9c")
    mine = TextFormatter().format(record("Signed up", event="signup", plan="pro"))
    assert mine.endswith(": Signed up event=signup plan=pro")


def test_text_shows_a_traceback_field_below_the_line_not_in_it() -> None:
    made = record("Job failed", traceback='  File "app.py", line 3\nValueError: x', code=7)
    first, *below = TextFormatter().format(made).split("\n")
    assert first.endswith(": Job failed code=7")
    assert below == ['      File "app.py", line 3', "    ValueError: x"]
