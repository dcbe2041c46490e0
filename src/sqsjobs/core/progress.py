"""A running job's progress: the small JSON value its handler reports with ``ctx.progress``.

Progress is kept on the record (``Job.progress``) so that anyone reading the job (the
CLI, the dashboard, ``queue.get``) sees how far a long run has come. It is never a write
of its own: the run keeps the latest value and sends it with its next heartbeat (one
every lease / 3) and with its outcome, so reporting progress often costs nothing more
than the heartbeats a run makes anyway (``worker.lease``). Last value wins.
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from .errors import JobConfigError
from .validation import dump_json, plain_json

MAX_PROGRESS_BYTES = 1024


def checked_progress(value: Any) -> JsonValue:
    """``value`` as kept (a plain JSON copy), or ``JobConfigError("invalid_payload")``."""
    if value is None:
        raise JobConfigError(
            "invalid_payload",
            "Job progress must be a JSON value other than None, such as 0.42 or "
            '{"done": 420, "total": 1000}',
        )
    plain = plain_json(value, "progress")
    size = len(dump_json(plain).encode())
    if size > MAX_PROGRESS_BYTES:
        raise JobConfigError(
            "invalid_payload",
            f"Job progress is {size} bytes as JSON (UTF-8); the limit is "
            f"{MAX_PROGRESS_BYTES} bytes: report a fraction or a count, not the work itself",
        )
    return plain
