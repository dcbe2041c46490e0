"""Opaque keyset cursors for ``list``: where the previous page ended, not an offset."""

from __future__ import annotations

import base64
import binascii
import json

from .errors import JobConfigError
from .times import utc


def encode_cursor(created_at: float, job_id: str) -> str:
    raw = json.dumps([created_at, job_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[float, str]:
    """The position a cursor names, or ``invalid_option`` for anything ``list()`` never made.

    A position is a ``created_at`` that is a UTC datetime (so never NaN, an infinity or
    a number past year 9999, all of which JSON text can spell) and a job id that UTF-8
    can encode: both stores build their range keys from it.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created_at, job_id = json.loads(base64.urlsafe_b64decode(padded))
        if isinstance(created_at, bool) or not isinstance(created_at, int | float):
            raise TypeError(created_at)
        position = float(created_at)
        utc(position)
        if not isinstance(job_id, str):
            raise TypeError(job_id)
        job_id.encode()
    except (ValueError, TypeError, OverflowError, OSError, binascii.Error):
        raise JobConfigError(
            "invalid_option",
            f"Invalid cursor {cursor!r}: pass a next_cursor returned by list()",
        ) from None
    return position, job_id
