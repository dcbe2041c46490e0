"""How a command fails: one ``error: ...`` line and an exit code, never a stack.

Exit codes: 0 success; 2 bad usage (click's own parsing errors, and input the library
refuses before anything is sent: ``usage_error``); 1 anything else, such as a job that
does not exist, an idempotency conflict, or AWS refusing a call (``CommandFailed``).

An error line may quote an endpoint (botocore's ``EndpointConnectionError`` names the URL
it could not reach), and endpoints can carry credentials (``http://key:secret@host``, a
presigned ``X-Amz-Signature``): every line, and the ``--debug`` traceback, is redacted.

The AWS failures an operator meets first are explained in one line that names the fix
(``aws.explain``, shared with the dashboard).
"""

from __future__ import annotations

import sys
import traceback
from typing import IO, Any

import click

from .. import JobConfigError
from ..aws.explain import one_line
from ..core.text import escape_controls, redact_credentials, safe_line


class CommandFailed(click.ClickException):
    """A command's failure, shown as one line; exit code 1."""

    exit_code = 1

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {safe_line(self.message)}", file=file or sys.stderr)


def usage_error(error: JobConfigError | str) -> click.UsageError:
    """Input the library (or the store's configuration) refuses: the caller must change it."""
    message = safe_line(error) if isinstance(error, str) else one_line(error)
    return click.UsageError(message, click.get_current_context(silent=True))


def redacted_traceback() -> str:
    """The traceback being handled, as ``--debug`` shows it: its lines, with no URL
    credentials and no control character left to act on the terminal."""
    lines = redact_credentials(traceback.format_exc()).split("\n")
    return "\n".join(escape_controls(line) for line in lines)
