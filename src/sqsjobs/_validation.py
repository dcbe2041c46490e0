"""Every input rule of the public API, each with a message that says what is allowed.

Grammars are matched with ``re.fullmatch`` (``$`` would accept a trailing newline).
Payloads are JSON only: the check walks the value once and returns a plain copy, so
what the store writes is exactly what a reader gets back, with no silent coercion
(``{1: x}`` would come back as ``{"1": x}``, a tuple as a list, NaN not at all).
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, JsonValue

from ._errors import ConfigErrorCode, JobConfigError

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
            out[str.__str__(key)] = _plain(item, what, f"{path}.{key}")
        return out
    if isinstance(value, list):
        return [_plain(item, what, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, BaseModel):
        return _plain(value.model_dump(mode="json"), what, path)
    return _scalar(value, what, path)


def _scalar(value: Any, what: str, path: str) -> JsonValue:
    """A JSON scalar as its plain type: enum members and other subclasses become their value."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _bad(what, path, f"{value!r} is not a finite number")
        return float(value)
    raise _bad(what, path, f"a {type(value).__name__} is not JSON")


def _bad(what: str, path: str, reason: str) -> JobConfigError:
    return JobConfigError(
        "invalid_payload",
        f"Job {what} at {path}: {reason}. Allowed: dict with str keys, list, str, int, "
        "finite float, bool, None, nested, or a pydantic model.",
    )


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


def seconds(value: object, what: str, *, positive: bool = False) -> float:
    """A duration in seconds from a number or ``timedelta``: finite, >= 0 (> 0 if positive)."""
    if isinstance(value, timedelta):
        value = value.total_seconds()
    bound = "> 0" if positive else ">= 0"
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
        or (positive and value == 0)
    ):
        raise JobConfigError(
            "invalid_option",
            f"Invalid {what} {value!r}: must be a finite number of seconds {bound} or a timedelta",
        )
    return float(value)


def aware(value: object, what: str) -> datetime:
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise JobConfigError(
            "invalid_option",
            f"Invalid {what} {value!r}: must be a timezone-aware datetime "
            "(e.g. datetime.now(timezone.utc)); naive datetimes are ambiguous",
        )
    return value


def integer(value: object, what: str, *, minimum: int | None = None) -> int:
    """An int (never a bool) at or above ``minimum``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or (minimum is not None and value < minimum)
    ):
        floor = f" >= {minimum}" if minimum is not None else ""
        raise JobConfigError("invalid_option", f"Invalid {what} {value!r}: must be an int{floor}")
    return int(value)


def page_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise JobConfigError("invalid_option", f"Invalid limit {limit!r}: must be an int 1..1000")
    return limit
