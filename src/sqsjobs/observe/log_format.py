"""How a worker process writes its log records: one JSON object per line, or one text line.

JSON is for machines (a container's log driver, CloudWatch Logs Insights, journald): every
structured field a record carries (``event``, ``job_id``, ``job_name``, ``queue``,
``attempt``, ``tenant``, ``worker_id``, a handler's own ``extra``) becomes a key, so a
query filters on them without parsing prose, and every line says which release wrote it
(``sqsjobs_version``): during a rolling upgrade, the releases' lines are told apart. Text
is for a person at a terminal: the message, then the job's fields as ``key=value``, then
the record's other fields (a handler's ``extra``) the same way. sqsjobs' own events
(``event`` naming one, ``jobs.*``) say in their message what their other fields hold, so
text leaves those out, where it would repeat the message; no other record's fields are
written anywhere else, so text keeps them.

Either way a record is exactly one line, whatever its text holds: a message, job name or
exception that a payload or a remote service put a line break or a terminal escape into
could otherwise end the record and print a forged one, and a bidi control (``\\u202e``)
could show it in another order. JSON escapes them by itself (the few separators and bidi
controls ``json.dumps`` leaves raw are escaped here too, still the same JSON); text
escapes every control and bidi character (``core.text``), and a traceback's lines are
indented, so only a record starts a line at column 0. Timestamps are ISO 8601 in UTC,
the same on every host.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from .. import __version__
from ..core.text import escape_controls, escape_json_controls, redact_credentials
from .log import EVENT_PREFIX, TRACEBACK_FIELD

JOB_KEYS = ("job_id", "job_name", "queue", "attempt", "tenant")  # the job's, in this order
VERSION_KEY = "sqsjobs_version"  # on every JSON line: the release that wrote it
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
}
_BARE = frozenset(" \t\"'=\\")  # a text value holding one of these is quoted


def utc_timestamp(created: float) -> str:
    """``2026-12-01T10:31:04.123Z``: ISO 8601, UTC, milliseconds."""
    instant = datetime.fromtimestamp(created, UTC)
    return instant.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def structured_fields(record: logging.LogRecord) -> dict[str, Any]:
    """What a caller added through ``extra`` (sqsjobs' event and job fields among them)."""
    return {
        key: value
        for key, value in vars(record).items()
        if key not in _STANDARD and not key.startswith("_")
    }


def exception_text(formatter: logging.Formatter, record: logging.LogRecord) -> str | None:
    """The record's traceback, without the credentials some libraries quote in URLs."""
    if record.exc_info and not record.exc_text:
        record.exc_text = formatter.formatException(record.exc_info)
    text = record.exc_text
    if record.stack_info:
        stack = formatter.formatStack(record.stack_info)
        text = f"{text}\n{stack}" if text else stack
    return redact_credentials(text) if text else None


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line.

    Keys: ``timestamp``, ``level``, ``logger``, ``message``, ``sqsjobs_version``, then
    every structured field (a value JSON cannot hold is written as its ``str``), then
    ``exception`` when the record has a traceback. A caller's ``extra`` never replaces
    the first five. The version is the package's, a constant: it costs a key, no lookup.
    """

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = {
            "timestamp": utc_timestamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            VERSION_KEY: __version__,
        }
        for key, value in structured_fields(record).items():
            fields.setdefault(key, value)
        exception = exception_text(self, record)
        if exception is not None:
            fields["exception"] = exception
        return escape_json_controls(json.dumps(fields, ensure_ascii=False, default=str))


class TextFormatter(logging.Formatter):
    """``TIMESTAMP LEVEL LOGGER: message job_id=... job_name=... queue=... attempt=... k=v``.

    The job's fields follow the message on every record that has them (those ``ctx.log``
    writes inside a handler included), then the record's other structured fields in the
    order the caller gave them (``extra={"rows": 1204}`` gives ``rows=1204``), except on
    sqsjobs' own events, whose message says what those hold (the module docstring). A
    field whose value is ``None`` is left out. A key or value with a space, quote, ``=``
    or backslash is quoted as a JSON string, every control character escaped. A
    traceback (the record's exception, else the failed handler's ``traceback`` field)
    follows on lines indented by four spaces.
    """

    def format(self, record: logging.LogRecord) -> str:
        line = (
            f"{utc_timestamp(record.created)} {record.levelname:<7} {record.name}: "
            f"{escape_controls(record.getMessage())}{job_suffix(record)}{extra_suffix(record)}"
        )
        exception = exception_text(self, record)
        if exception is None:
            exception = getattr(record, TRACEBACK_FIELD, None)
        if not isinstance(exception, str):
            return line
        indented = (f"    {escape_controls(part)}" for part in exception.split("\n"))
        return "\n".join([line, *indented])


def job_suffix(record: logging.LogRecord) -> str:
    """`` job_id=... job_name=...`` for the job fields the record carries (``None`` left out)."""
    fields = vars(record)
    return "".join(
        f" {key}={text_value(fields[key])}" for key in JOB_KEYS if fields.get(key) is not None
    )


def extra_suffix(record: logging.LogRecord) -> str:
    """`` key=value`` for each structured field besides the job's, the traceback (shown
    below the line) and a sqsjobs event's own (``None`` left out)."""
    fields = structured_fields(record)
    if str(fields.get("event", "")).startswith(EVENT_PREFIX):
        return ""
    return "".join(
        f" {text_value(key)}={text_value(value)}"
        for key, value in fields.items()
        if value is not None and key not in JOB_KEYS and key != TRACEBACK_FIELD
    )


def text_value(value: object) -> str:
    """``value`` as one ``key=value`` token: bare when that is unambiguous, else quoted."""
    text = str(value)
    if text and not _BARE.intersection(text) and escape_controls(text) == text:
        return text
    return escape_json_controls(json.dumps(text, ensure_ascii=False))
