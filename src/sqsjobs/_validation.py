"""Every input rule of the public API, each with a message that says what is allowed.

Grammars are matched with ``re.fullmatch`` (``$`` would accept a trailing newline).
Payloads are JSON only: the check walks the value once and returns a plain copy, so
what the store writes is exactly what a reader gets back, with no silent coercion
(``{1: x}`` would come back as ``{"1": x}``, a tuple as a list, NaN not at all), and
nothing that cannot be written as UTF-8 JSON text (a lone surrogate, an int past
Python's digit limit).

Numeric options have caps, each set here once and used by every producer and the
constructors: a lease is an SQS visibility timeout, so at most 12 hours; a delay or
``run_at`` at most 366 days ahead (the README promises a year); a priority fits a
signed 32-bit int, which every store keeps exactly.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeGuard

from pydantic import BaseModel, JsonValue

from ._errors import ConfigErrorCode, JobConfigError
from ._time import utc

DAY = 86_400.0
MAX_LEASE = 43_200.0  # SQS's cap on a message's visibility timeout
MAX_TIMEOUT = 7 * DAY
MAX_DELAY = 366 * DAY
MIN_PRIORITY = -(2**31)
MAX_PRIORITY = 2**31 - 1


@dataclass(frozen=True)
class Span:
    """The durations an option allows: from zero (or above it) up to a cap, and why that cap."""

    positive: bool
    maximum: float
    why: str

    def allows(self, value: object) -> TypeGuard[int | float]:
        """NaN and infinities fail the comparisons; ints compare exactly, however large."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        above = value > 0 if self.positive else value >= 0
        return above and value <= self.maximum

    def __str__(self) -> str:
        floor = "> 0" if self.positive else ">= 0"
        return f"a finite number of seconds {floor} and <= {self.maximum:.0f} ({self.why})"


LEASE = Span(positive=True, maximum=MAX_LEASE, why="SQS's visibility cap")
TIMEOUT = Span(positive=False, maximum=MAX_TIMEOUT, why="7 days")
DELAY = Span(positive=False, maximum=MAX_DELAY, why="366 days")


def _writable(value: int) -> bool:
    """Whether ``value`` fits Python's cap on int-to-text digits (JSON and ``repr`` obey it)."""
    try:
        int.__repr__(value)
    except ValueError:
        return False
    return True


def shown(value: object) -> str:
    """``repr`` for a message, even of an int too long for ``repr`` to write."""
    if isinstance(value, int) and not _writable(value):
        return f"<an int of more than {sys.get_int_max_str_digits()} digits>"
    return repr(value)


JOB_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9._:-]{0,127}")
QUEUE_NAME = re.compile(r"[a-zA-Z0-9_:-]{1,64}")
IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")
TENANT = re.compile(r"[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?")


def _check_grammar(
    value: object, pattern: re.Pattern[str], what: str, code: ConfigErrorCode = "invalid_option"
) -> str:
    if not isinstance(value, str) or pattern.fullmatch(value) is None:
        raise JobConfigError(code, f"Invalid {what} {value!r}: must match {pattern.pattern}")
    return value


def check_job_name(name: object) -> str:
    return _check_grammar(name, JOB_NAME, "job name", "invalid_name")


def check_queue_name(queue: object) -> str:
    return _check_grammar(queue, QUEUE_NAME, "queue name", "invalid_name")


def check_idempotency_key(key: object) -> str:
    return _check_grammar(key, IDEMPOTENCY_KEY, "idempotency key")


def check_tenant(tenant: object) -> str:
    return _check_grammar(tenant, TENANT, "tenant")


def plain_json(value: Any, what: str = "payload") -> JsonValue:
    """A plain-JSON copy of ``value`` (pydantic models dumped), or ``invalid_payload``."""
    try:
        return _plain(value, what, "$")
    except RecursionError:
        raise JobConfigError(
            "invalid_payload", f"Job {what} is nested too deeply or contains a cycle."
        ) from None


def _plain(value: Any, what: str, path: str) -> JsonValue:
    if isinstance(value, dict):
        out: dict[str, JsonValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _bad(what, path, f"key {key!r} is a {type(key).__name__}, not a str")
            out[_text(key, what, path, key=True)] = _plain(item, what, f"{path}.{key}")
        return out
    if isinstance(value, list):
        return [_plain(item, what, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, BaseModel):
        return _plain(_dumped(value, what, path), what, path)
    return _scalar(value, what, path)


def _dumped(model: BaseModel, what: str, path: str) -> Any:
    try:
        return model.model_dump(mode="json")
    except ValueError as error:  # PydanticSerializationError is one too
        raise _bad(
            what, path, f"the {type(model).__name__} model could not be dumped as JSON: {error}"
        ) from None


def _scalar(value: Any, what: str, path: str) -> JsonValue:
    """A JSON scalar as its plain type: enum members and other subclasses become their value."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _text(value, what, path)
    if isinstance(value, int):
        return _whole(value, what, path)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _bad(what, path, f"{value!r} is not a finite number")
        return float(value)
    raise _bad(what, path, f"a {type(value).__name__} is not JSON")


def _text(value: str, what: str, path: str, key: bool = False) -> str:
    """``value`` as a plain str, if UTF-8 can encode it: a lone surrogate it cannot."""
    try:
        value.encode()
    except UnicodeEncodeError as error:
        found = f"a lone surrogate {value[error.start]!r} at index {error.start}"
        raise _bad(
            what, path, f"key {value!r} has {found}" if key else f"a str with {found}"
        ) from None
    return str.__str__(value)


def _whole(value: int, what: str, path: str) -> int:
    if not _writable(value):
        limit = sys.get_int_max_str_digits()
        raise _bad(what, path, f"an int of more than {limit} digits cannot be written as JSON")
    return int(value)


def _bad(what: str, path: str, reason: str) -> JobConfigError:
    message = (
        f"Job {what} at {path}: {reason}. Allowed: dict with str keys, list, str, int, "
        "finite float, bool, None, nested, or a pydantic model."
    )  # a path through a key with a lone surrogate is escaped, so the message can be printed
    return JobConfigError("invalid_payload", message.encode(errors="backslashreplace").decode())


def dump_json(value: JsonValue) -> str:
    """The compact JSON text that is stored and measured."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def check_size(text: str, max_bytes: int, what: str = "payload") -> None:
    size = len(text.encode())
    if size > max_bytes:
        raise JobConfigError(
            "payload_too_large",
            f"Job {what} is {size} bytes as JSON (UTF-8); the limit is {max_bytes} bytes. "
            "Store large data elsewhere (e.g. S3) and enqueue a reference to it.",
        )


def checked_json(value: Any, max_bytes: int, what: str = "payload") -> tuple[JsonValue, str]:
    """Validate ``value`` as a payload or result: its plain copy and its stored JSON text."""
    plain = plain_json(value, what)
    text = dump_json(plain)
    check_size(text, max_bytes, what)
    return plain, text


def seconds(value: object, what: str, span: Span) -> float:
    """A duration in seconds from a number or ``timedelta``, within ``span``."""
    amount = value.total_seconds() if isinstance(value, timedelta) else value
    if not span.allows(amount):
        raise JobConfigError(
            "invalid_option", f"Invalid {what} {shown(value)}: must be {span} or a timedelta"
        )
    return float(amount)


def aware(value: object, what: str) -> datetime:
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise JobConfigError(
            "invalid_option",
            f"Invalid {what} {value!r}: must be a timezone-aware datetime "
            "(e.g. datetime.now(timezone.utc)); naive datetimes are ambiguous",
        )
    return value


def due_time(run_at: object, now: float) -> float:
    """``run_at`` in epoch seconds: up to 366 days after ``now``; any time before runs at once."""
    moment = aware(run_at, "run_at")
    due = moment.timestamp()  # exact for any aware datetime, unlike converting it to UTC
    if due - now > MAX_DELAY:
        raise JobConfigError(
            "invalid_option",
            f"Invalid run_at {moment!r}: must be at most 366 days ({MAX_DELAY:.0f} s) after "
            f"now; it is {due - now:.0f} s ahead",
        )
    try:
        utc(due)
    except (OverflowError, ValueError, OSError):
        raise JobConfigError(
            "invalid_option",
            f"Invalid run_at {moment!r}: must fall between 0001-01-01 and 9999-12-31 in UTC",
        ) from None
    return due


def _int_within(value: object, low: int | None, high: int | None) -> TypeGuard[int]:
    """An int, never a bool (which ``isinstance`` counts as one), within the given bounds."""
    return (
        not isinstance(value, bool)
        and isinstance(value, int)
        and (low is None or value >= low)
        and (high is None or value <= high)
    )


def integer(value: object, what: str, *, minimum: int | None = None) -> int:
    """An int (never a bool) at or above ``minimum``."""
    if not _int_within(value, minimum, None):
        floor = f" >= {minimum}" if minimum is not None else ""
        raise JobConfigError(
            "invalid_option", f"Invalid {what} {shown(value)}: must be an int{floor}"
        )
    return int(value)


def priority(value: object) -> int:
    """A signed 32-bit int: every store keeps it exactly and orders by it."""
    if not _int_within(value, MIN_PRIORITY, MAX_PRIORITY):
        raise JobConfigError(
            "invalid_option",
            f"Invalid priority {shown(value)}: must be an int from {MIN_PRIORITY} to "
            f"{MAX_PRIORITY} (signed 32-bit)",
        )
    return int(value)


def page_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise JobConfigError("invalid_option", f"Invalid limit {limit!r}: must be an int 1..1000")
    return limit
