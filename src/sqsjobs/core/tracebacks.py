"""A failed run's traceback as a job's record keeps it: the handler's frames, bounded, no secrets.

``last_error`` says what failed in one line; an engineer paged at night also needs where.
The record keeps the last failure's traceback beside it (``Job.last_traceback``), so
``jobs show``, ``--json`` and the dashboard show the stack without access to the
worker's logs. What is kept is trimmed three ways:

- **The handler's frames only.** The frames that lead from sqsjobs' own code (and
  asyncio's or a thread pool's) into the handler say nothing about the failure; frames
  the handler calls into, sqsjobs' included, are kept.
- **Bounded** to ``MAX_TRACEBACK_BYTES`` of UTF-8: the header and the last lines (the
  failing frame and the exception are at the end) are kept, the middle is counted.
- **No secrets**: URL credentials and secret query values (as ``core.text`` redacts
  them in ``last_error``), AWS access key ids, and values assigned to names that say
  they are secret in the source lines a traceback quotes. Payload values are never
  quoted by sqsjobs itself: a payload the handler's model refuses is reported without
  its input (``handlers.registry``), before the handler's frames begin.

The store SPI's ``fail(..., error: str, ...)`` keeps its signature: the error it is given
is a ``FailureText``, a ``str`` that also carries the traceback. A store that knows reads
``traceback_of(error)``; any other store keeps the text as before.
"""

from __future__ import annotations

import hashlib
import os
import re
import traceback
from pathlib import Path

from .text import escape_controls, redact_credentials

MAX_TRACEBACK_BYTES = 8192
# Where the code that runs a handler lives: sqsjobs itself, asyncio's tasks and the
# thread pool a sync handler runs in (found beside ``os``, so as not to import them).
_STDLIB = Path(os.__file__).resolve().parent
_RUNNERS = (
    str(Path(__file__).resolve().parent.parent) + os.sep,
    str(_STDLIB / "asyncio") + os.sep,
    str(_STDLIB / "concurrent") + os.sep,
    str(_STDLIB / "threading.py"),
)
_KEY_ID = re.compile(r"\b(?:AKIA|ASIA|AROA|AIDA)[0-9A-Z]{16}\b")
_SECRET_ASSIGNMENT = re.compile(
    r"(?i)(\b[\w.]*(?:secret|password|passwd|token|api_?key|access_?key|private_?key"
    r"|authorization|credential)\w*[\"']?\s*[=:]\s*)([\"'])[^\"'\n]*\2"
)
REDACTED = "***"


class FailureText(str):
    """A failure's ``last_error`` text, also carrying its traceback (``None``: none kept)."""

    traceback: str | None

    def __new__(cls, text: str, trace: str | None) -> FailureText:
        made = super().__new__(cls, text)
        made.traceback = trace
        return made


def traceback_of(error: str) -> str | None:
    """The traceback a failure's ``error`` carries, if the worker kept one."""
    return error.traceback if isinstance(error, FailureText) else None


def handler_traceback(error: BaseException) -> str | None:
    """``error``'s traceback from the handler's first frame on, redacted and bounded.

    ``None`` when the error never passed through a frame outside the runner (a timeout
    or a refusal sqsjobs raised itself): its ``last_error`` line says all there is.
    """
    summary = traceback.TracebackException.from_exception(error)
    frames = list(summary.stack)
    while frames and _runner_frame(frames[0].filename):
        del frames[0]
    if not frames and summary.__cause__ is None and summary.__context__ is None:
        return None
    summary.stack = traceback.StackSummary.from_list(frames)
    lines = "".join(summary.format()).rstrip("\n").split("\n")
    return bounded("\n".join(escape_controls(redact_secrets(line)) for line in lines))


def _runner_frame(filename: str) -> bool:
    """A frame of the code that ran the handler rather than the handler's own."""
    try:
        resolved = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return resolved.startswith(_RUNNERS)


def redact_secrets(text: str) -> str:
    """``text`` without URL credentials, AWS key ids or quoted secret values."""
    text = _KEY_ID.sub(REDACTED, redact_credentials(text))
    return _SECRET_ASSIGNMENT.sub(rf"\1\2{REDACTED}\2", text)


def bounded(text: str, most: int = MAX_TRACEBACK_BYTES) -> str:
    """``text`` within ``most`` UTF-8 bytes: its first line and as many last lines as fit.

    A traceback reads from the outermost call to the failure, so its end matters most;
    the first line stays so the text still reads as a traceback.
    """
    if len(text.encode()) <= most:
        return text
    lines = text.split("\n")
    head, rest = lines[0], lines[1:]
    budget = most - len(head.encode()) - 64  # room for the line that counts what was cut
    kept: list[str] = []
    for line in reversed(rest):
        size = len(line.encode()) + 1
        if size > budget:
            break
        kept.append(line)
        budget -= size
    left_out = len(rest) - len(kept)
    if not kept:  # one line longer than the whole budget: keep its end
        tail = rest[-1].encode()[-max(budget, 0) :].decode(errors="ignore")
        kept, left_out = [tail], len(rest) - 1
    return "\n".join([head, f"  … {left_out} lines left out …", *reversed(kept)])


def error_digest(error: str) -> str:
    """A short fingerprint of a ``last_error`` text, stored with the traceback it goes with.

    A release that does not know tracebacks may write a newer ``last_error`` and leave an
    older traceback beside it; a reader shows a traceback only beside the error it was
    kept for.
    """
    return hashlib.blake2b(error.encode(), digest_size=6).hexdigest()
