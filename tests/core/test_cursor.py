"""Opaque keyset cursors for list(): they round-trip, and anything else is refused."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqsjobs import JobConfigError
from sqsjobs._cursor import decode_cursor, encode_cursor


def test_cursor_round_trips() -> None:
    cursor = encode_cursor(1_800_000_000.25, "abc")
    assert decode_cursor(cursor) == (1_800_000_000.25, "abc")


def test_cursor_is_url_safe_text_without_padding() -> None:
    cursor = encode_cursor(1.5, "x" * 7)
    assert "=" not in cursor
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@given(st.floats(allow_nan=False, allow_infinity=False), st.text())
def test_any_position_round_trips(created_at: float, job_id: str) -> None:
    assert decode_cursor(encode_cursor(created_at, job_id)) == (created_at, job_id)


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    "cursor",
    ["", "!!!", "é", "a", b64("not json"), b64("[1]"), b64('[1, "x", 2]'), b64("null"),
     b64('"ab"'), b64('{"a": 1}'), b64('[true, "x"]'), b64('["1", "x"]'), b64("[1, 2]"), 5],
)  # fmt: skip
def test_invalid_cursor_rejected(cursor: Any) -> None:
    with pytest.raises(JobConfigError) as caught:
        decode_cursor(cursor)
    assert caught.value.code == "invalid_option"
    assert str(caught.value) == (
        f"Invalid cursor {cursor!r}: pass a next_cursor returned by list()"
    )
