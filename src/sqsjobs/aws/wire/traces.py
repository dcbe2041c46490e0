"""A failure's traceback on a job's record: the ``trace`` attribute, compressed.

A failing write keeps ``trace`` (binary): zlib of the ``last_error`` digest it belongs
to, a line break, then the traceback (``core.tracebacks``). Every other write that sets
``last_error`` removes it. The digest makes the pairing safe in a mixed fleet: a release
that does not know ``trace`` writes a newer ``last_error`` and leaves the older trace in
place, and a reader shows a trace only beside the error it was kept for.

Compressed, a traceback of a few frames takes a few hundred bytes; the 8 KiB most
(``MAX_TRACEBACK_BYTES``) about 2 KB. Only a job that failed carries one, and every later
write of that record bills its size (``docs/explanation/aws-store.md``). Releases before this one
ignore the attribute: it needs no new record format.
"""

from __future__ import annotations

import zlib
from typing import Any

from ...core.tracebacks import error_digest, traceback_of

TRACE = "trace"
_LEVEL = 9  # written once per failure, read rarely: the smallest item wins


def packed_trace(error: str) -> dict[str, bytes] | None:
    """The ``trace`` value for a failure's ``error``; ``None``: it carries no traceback."""
    kept = traceback_of(error)
    if kept is None:
        return None
    return {"B": zlib.compress(f"{error_digest(str(error))}\n{kept}".encode(), _LEVEL)}


def unpacked_trace(item: dict[str, Any], last_error: str | None) -> str | None:
    """The traceback ``item`` keeps for its ``last_error``; ``None`` when it keeps none,
    or one kept for an earlier error (written over by a release without traces)."""
    packed = item.get(TRACE, {}).get("B")
    if packed is None or last_error is None:
        return None
    digest, _, trace = zlib.decompress(bytes(packed)).decode().partition("\n")
    return trace if digest == error_digest(last_error) else None


def error_write(
    sets: dict[str, str], values: dict[str, Any], remove: tuple[str, ...], error: str
) -> tuple[str, ...]:
    """Add ``last_error`` = ``error`` and its trace to an update; returns ``remove`` with
    ``trace`` added when the error carries none (an older one must not stay beside it)."""
    sets["last_error"] = ":error"
    values[":error"] = {"S": str(error)}
    packed = packed_trace(error)
    if packed is None:
        return (*remove, TRACE)
    sets[TRACE] = ":trace"
    values[":trace"] = packed
    return remove
