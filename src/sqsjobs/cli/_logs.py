"""The worker process's logging: where records go, in which format, from which loggers.

Records go to stderr, one line each, for whatever collects the container's output. The
format follows where they go unless ``--log-format`` says otherwise: a terminal is read
by a person (text), anything else by a log pipeline (JSON), the way a container's
stderr reaches CloudWatch Logs or journald.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..observe.log import LOGGER_NAME
from ..observe.log_format import JsonFormatter, TextFormatter

F = TypeVar("F", bound=Callable[..., Any])
LOG_FORMATS = ("json", "text")
QUIET_LOGGERS = ("boto3", "botocore", "aiobotocore")
LOG_FORMAT_HELP = (
    "How log records are written to stderr: json (one object per line with timestamp, "
    "level, logger, message, sqsjobs_version, event, job_id, job_name, queue, attempt, "
    "tenant, a handler's extra fields, and exception when there is one) or text (one "
    "line, job fields then a handler's extra fields as key=value). Default: "
    "text when stderr is a terminal (a person reads it), json otherwise (a container's "
    "log driver, CloudWatch Logs or journald collects it)."
)


def log_format_option() -> Callable[[F], F]:
    """``--log-format json|text`` (also ``SQSJOBS_LOG_FORMAT``); unset means by terminal."""
    return click.option(
        "--log-format",
        type=click.Choice(LOG_FORMATS),
        default=None,
        envvar="SQSJOBS_LOG_FORMAT",
        show_envvar=True,
        help=LOG_FORMAT_HELP,
    )


def configure_logging(log_format: str | None, *, debug: bool) -> None:
    """One line per record on stderr; with ``--debug``, sqsjobs' DEBUG records and boto's.

    boto's INFO records ("Found credentials in environment variables") say nothing an
    operator acts on, so they are shown only when debugging.
    """
    handler = logging.StreamHandler(sys.stderr)
    chosen = log_format or ("text" if sys.stderr.isatty() else "json")
    handler.setFormatter(JsonFormatter() if chosen == "json" else TextFormatter())
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    if debug:
        logging.getLogger(LOGGER_NAME).setLevel(logging.DEBUG)
        return
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
