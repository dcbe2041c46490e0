"""How a command fails: one ``error: ...`` line and an exit code, never a stack.

Exit codes: 0 success; 2 bad usage (click's own parsing errors, and input the library
refuses before anything is sent: ``usage_error``); 1 anything else, such as a job that
does not exist, an idempotency conflict, or AWS refusing a call (``CommandFailed``).

An error line may quote an endpoint (botocore's ``EndpointConnectionError`` names the URL
it could not reach), and endpoints can carry credentials (``http://key:secret@host``, a
presigned ``X-Amz-Signature``): every line, and the ``--debug`` traceback, is redacted.
"""

from __future__ import annotations

import sys
import traceback
from typing import IO, Any

import click

from .. import JobConfigError, JobError
from .._text import escape_controls, redact_credentials, safe_line

MAX_MESSAGE_CHARS = 300


class CommandFailed(click.ClickException):
    """A command's failure, shown as one line; exit code 1."""

    exit_code = 1

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {safe_line(self.message)}", file=file or sys.stderr)


def one_line(error: BaseException) -> str:
    """The error as a single line: what went wrong, without the stack.

    sqsjobs' own errors (every ``JobError``, a user's subclass too) already say what was
    wrong and what is allowed, so their message stands alone; anything else is prefixed
    with its type, since a bare ``KeyError`` message (``'name'``) means nothing by itself.
    """
    text = safe_line(" ".join(str(error).split()))
    if not isinstance(error, JobError):
        text = f"{type(error).__name__}: {text}" if text else type(error).__name__
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 1] + "…"
    return text or type(error).__name__


def usage_error(error: JobConfigError | str) -> click.UsageError:
    """Input the library (or the store's configuration) refuses: the caller must change it."""
    message = safe_line(error) if isinstance(error, str) else one_line(error)
    return click.UsageError(message, click.get_current_context(silent=True))


def redacted_traceback() -> str:
    """The traceback being handled, as ``--debug`` shows it: its lines, with no URL
    credentials and no control character left to act on the terminal."""
    lines = redact_credentials(traceback.format_exc()).split("\n")
    return "\n".join(escape_controls(line) for line in lines)
