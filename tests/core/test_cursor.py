"""Opaque keyset cursors for list(): they round-trip, and anything else is refused."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqsjobs import JobConfigError
from sqsjobs.core.cursor import decode_cursor, encode_cursor


def test_cursor_round_trips() -> None:
    cursor = encode_cursor(1_800_000_000.25, "abc")
    assert decode_cursor(cursor) == (1_800_000_000.25, "abc")


def test_cursor_is_url_safe_text_without_padding() -> None:
    cursor = encode_cursor(1.5, "x" * 7)
    assert "=" not in cursor
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


EARLIEST = datetime.min.replace(tzinfo=UTC).timestamp()
LATEST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()


@given(
    st.floats(min_value=EARLIEST, max_value=LATEST),
    st.text(st.characters(exclude_categories=("Cs",))),
)
def test_any_position_round_trips(created_at: float, job_id: str) -> None:
    assert decode_cursor(encode_cursor(created_at, job_id)) == (created_at, job_id)


def test_positions_at_the_ends_of_the_utc_calendar_round_trip() -> None:
    for created_at in (EARLIEST, LATEST, 1796094741.2439704, -0.5):
        assert decode_cursor(encode_cursor(created_at, "f3a9")) == (created_at, "f3a9")


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "!!!",
        "é",
        "a",
        b64("not json"),
        b64("[1]"),
        b64('[1, "x", 2]'),
        b64("null"),
        b64('"ab"'),
        b64('{"a": 1}'),
        b64('[true, "x"]'),
        b64('["1", "x"]'),
        b64("[1, 2]"),
        5,
        b64('[NaN, "x"]'),
        b64('[Infinity, "x"]'),
        b64('[-Infinity, "x"]'),
        b64('[1e999, "x"]'),
        b64('[-1e999, "x"]'),
        b64('[1e300, "x"]'),
        b64(f'[{10**400}, "x"]'),
        b64("[" + "9" * 5000 + ', "x"]'),
        b64('[253402300800.5, "x"]'),
        b64('[-62135596801, "x"]'),
        b64('[1796094741.24, "\\ud800"]'),
    ],
)
def test_invalid_cursor_rejected(cursor: Any) -> None:
    with pytest.raises(JobConfigError) as caught:
        decode_cursor(cursor)
    assert caught.value.code == "invalid_option"
    assert str(caught.value) == (
        f"Invalid cursor {cursor!r}: pass a next_cursor returned by list()"
    )
