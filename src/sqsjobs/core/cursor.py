"""Opaque keyset cursors for ``list``: where the previous page ended, not an offset.

A cursor also says which way its list runs. A position means "after this one" in one
direction and "before it" in the other, so a cursor from a newest-first list given to an
oldest-first one would quietly restart the walk from the wrong end; it is refused
instead. Oldest-first cursors keep the form they always had, so cursors handed out by
earlier releases stay valid.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TypeVar

from .errors import JobConfigError
from .times import utc

NEWEST_FIRST = "newest"  # the marker a newest-first cursor carries after its position

# A keyset position: ``(created_at, id)``, or a sort key that orders as that does.
Position = TypeVar("Position", str, tuple[float, str])


def follows(position: Position, past: Position, *, newest_first: bool) -> bool:
    """Whether ``position`` comes after the cursor's ``past`` in a list running that way."""
    return position < past if newest_first else position > past


def encode_cursor(created_at: float, job_id: str, *, newest_first: bool = False) -> str:
    position: list[object] = [created_at, job_id]
    if newest_first:
        position.append(NEWEST_FIRST)
    raw = json.dumps(position, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, *, newest_first: bool = False) -> tuple[float, str]:
    """The position a cursor names, or ``invalid_option`` for anything ``list()`` never made
    or a cursor of a list running the other way.

    A position is a ``created_at`` that is a UTC datetime (so never NaN, an infinity or
    a number past year 9999, all of which JSON text can spell) and a job id that UTF-8
    can encode: both stores build their range keys from it.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created_at, job_id, *order = json.loads(base64.urlsafe_b64decode(padded))
        if isinstance(created_at, bool) or not isinstance(created_at, int | float):
            raise TypeError(created_at)
        position = float(created_at)
        utc(position)
        if not isinstance(job_id, str):
            raise TypeError(job_id)
        job_id.encode()
        if order not in ([], [NEWEST_FIRST]):
            raise ValueError(order)
    except (ValueError, TypeError, OverflowError, OSError, binascii.Error):
        raise JobConfigError(
            "invalid_option",
            f"Invalid cursor {cursor!r}: pass a next_cursor returned by list()",
        ) from None
    if bool(order) != newest_first:
        made, other = ("a newest", "an oldest") if order else ("an oldest", "a newest")
        raise JobConfigError(
            "invalid_option",
            f"Invalid cursor {cursor!r}: it continues {made}-first list, not {other}-first "
            f"one; list {made.split()[1]} first to page on, or start without a cursor",
        )
    return position, job_id
