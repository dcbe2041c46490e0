"""Opaque keyset cursors for ``list``: where the previous page ended, not an offset."""

from __future__ import annotations

import base64
import binascii
import json

from ._errors import JobConfigError


def encode_cursor(created_at: float, job_id: str) -> str:
    raw = json.dumps([created_at, job_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, str]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created_at, job_id = json.loads(base64.urlsafe_b64decode(padded))
        if isinstance(created_at, bool) or not isinstance(created_at, int | float):
            raise TypeError(created_at)
        if not isinstance(job_id, str):
            raise TypeError(job_id)
    except (ValueError, TypeError, binascii.Error):
        raise JobConfigError(
            "invalid_option",
            f"Invalid cursor {cursor!r}: pass a next_cursor returned by list()",
        ) from None
    return float(created_at), job_id
