"""Every input rule of the public API, each with a message that says what is allowed.

Grammars are matched with ``re.fullmatch`` (``$`` would accept a trailing newline).
Payloads are JSON only: the check walks the value once and returns a plain copy, so
what the store writes is exactly what a reader gets back, with no silent coercion
(``{1: x}`` would come back as ``{"1": x}``, a tuple as a list, NaN not at all), and
nothing that cannot be written as UTF-8 JSON text (a lone surrogate, an int past
Python's digit limit).

Numeric options have one vocabulary, used by the producers, the worker, the stores and
the Lambda factories alike: ``seconds`` (a finite number within a ``Span``; never a bool,
NaN or an infinity), ``duration`` (the same, or a ``timedelta``) and ``integer`` (an int,
never a bool, within bounds). Each takes the ``code`` of the error it raises:
``JobConfigError(code)`` for an option given per call, a plain ``ValueError`` (``None``)
for a constructor option. The caps are set here once: a lease is an SQS visibility
timeout, so at most 12 hours; a delay or ``run_at`` at most 366 days ahead (the README
promises a year); a priority fits a signed 32-bit int, which every store keeps exactly.
"""

from __future__ import annotations

import json
import math
import re
import sys
from datetime import datetime, timedelta
from typing import Any, NamedTuple, TypeGuard

from pydantic import BaseModel, JsonValue

from .errors import ConfigErrorCode, JobConfigError
from .times import utc

DAY = 86_400.0
MAX_LEASE = 43_200.0  # SQS's cap on a message's visibility timeout
MAX_TIMEOUT = 7 * DAY
MAX_DELAY = 366 * DAY
MIN_PRIORITY = -(2**31)
MAX_PRIORITY = 2**31 - 1
PAGE_LIMIT = 1000


Code = ConfigErrorCode | None
"""How a refused value is reported: ``JobConfigError(code)`` for an option given per call;
``None`` for a constructor option, which raises a plain ``ValueError`` (SPEC §2.3)."""


def refusal(value: object, what: str, allowed: str, code: Code) -> ValueError:
    """The error for ``value`` of option ``what``, naming what is ``allowed``.

    A per-call error reads like every other input rule (``Invalid lease 0: must be ...``);
    a constructor error names the parameter first, as Python's own argument errors do.
    """
    if code is None:
        return ValueError(f"{what} must be {allowed}, got {shown(value)}")
    return JobConfigError(code, f"Invalid {what} {shown(value)}: must be {allowed}")


class Span(NamedTuple):
    """The durations an option allows: finite seconds above a floor, up to a cap, and why."""

    positive: bool = False  # above ``minimum`` rather than at or above it
    minimum: float = 0.0
    maximum: float | None = None
    why: str | None = None

    def allows(self, value: object) -> TypeGuard[int | float]:
        """A real number, never a bool (which ``isinstance`` counts as an int), and finite.

        NaN fails every comparison; an int too large for a float is not a duration.
        """
        if isinstance(value, bool) or not isinstance(value, int | float) or not _finite(value):
            return False
        above = value > self.minimum if self.positive else value >= self.minimum
        return above and (self.maximum is None or value <= self.maximum)

    def __str__(self) -> str:
        floor = f"{'>' if self.positive else '>='} {self.minimum:g}"
        cap = "" if self.maximum is None else f" and <= {self.maximum:.0f}"
        why = "" if self.why is None else f" ({self.why})"
        return f"a finite number of seconds {floor}{cap}{why}"


def _finite(value: int | float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int past the largest float
        return False


NON_NEGATIVE = Span()
POSITIVE = Span(positive=True)
LEASE = Span(positive=True, maximum=MAX_LEASE, why="SQS's visibility cap")
TIMEOUT = Span(maximum=MAX_TIMEOUT, why="7 days")
DELAY = Span(maximum=MAX_DELAY, why="366 days")


def seconds(value: object, what: str, span: Span = NON_NEGATIVE, *, code: Code) -> float:
    """A number of seconds within ``span``, as a float."""
    if not span.allows(value):
        raise refusal(value, what, str(span), code)
    return float(value)


def duration(value: object, what: str, span: Span, *, code: Code) -> float:
    """Seconds within ``span`` from a number or a ``timedelta``, as a float."""
    amount = value.total_seconds() if isinstance(value, timedelta) else value
    if not span.allows(amount):
        raise refusal(value, what, f"{span} or a timedelta", code)
    return float(amount)


def integer(
    value: object,
    what: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    why: str | None = None,
    code: Code,
) -> int:
    """An int, never a bool (which ``isinstance`` counts as one), within the given bounds."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or (minimum is not None and value < minimum)
        or (maximum is not None and value > maximum)
    ):
        raise refusal(value, what, _int_rule(minimum, maximum, why), code)
    return int(value)


def _int_rule(minimum: int | None, maximum: int | None, why: str | None) -> str:
    if minimum is not None and maximum is not None:
        rule = f"an int from {minimum} to {maximum}"
    elif minimum is not None:
        rule = f"an int >= {minimum}"
    elif maximum is not None:
        rule = f"an int <= {maximum}"
    else:
        rule = "an int"
    return rule if why is None else f"{rule} ({why})"


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
# A message group: SQS allows up to 128 characters of ASCII letters, digits and
# punctuation; this is a subset that every tenant id and queue name (the defaults) fits.
GROUP_MAX = 128
GROUP = re.compile(rf"[a-zA-Z0-9._:/@-]{{1,{GROUP_MAX}}}")


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


def check_idempotency_key(key: object, what: str = "idempotency key") -> str:
    return _check_grammar(key, IDEMPOTENCY_KEY, what)


def check_tenant(tenant: object) -> str:
    return _check_grammar(tenant, TENANT, "tenant")


def check_group(group: object, tenant: str | None = None) -> str:
    """``group`` if valid; for a tenant's job, the group within that tenant (``tenant_group``)."""
    checked = _check_grammar(group, GROUP, "group")
    return checked if tenant is None else tenant_group(checked, tenant)


def tenant_group(group: str, tenant: str) -> str:
    """A tenant's group in its own namespace: ``tenant``, or ``{tenant}/...``.

    Groups order and pace jobs (a FIFO group runs one job at a time), so a tenant naming
    another's group could stall it: a job due in 12 hours holds its FIFO group until then.
    A tenant id holds no "/", so no prefixed group of tenant ``evil`` is ``acme`` or starts
    with ``acme/``. A group already in the namespace is kept as it is, so a ``Job.group``
    read back names the same group again, and the tenant's default group can be named.
    """
    if group == tenant or group.startswith(f"{tenant}/"):
        return group
    confined = f"{tenant}/{group}"
    if len(confined) > GROUP_MAX:
        raise JobConfigError(
            "invalid_option",
            f"Invalid group {group!r} for tenant {tenant!r}: a tenant's jobs are grouped as "
            f"'{tenant}/<group>', which must fit {GROUP_MAX} characters, so this tenant's "
            f"groups are at most {GROUP_MAX - len(tenant) - 1} characters (this one has "
            f"{len(group)})",
        )
    return confined


# Levels of nesting a payload or result may have: what every reader of a job (pydantic's
# dump, from 255 levels on, and the JSON printers of the CLI and dashboard) can take.
MAX_DEPTH = 200


def plain_json(value: Any, what: str = "payload") -> JsonValue:
    """A plain-JSON copy of ``value`` (pydantic models dumped), or ``invalid_payload``."""
    try:
        return _plain(value, what, "$")
    except RecursionError:
        raise JobConfigError(
            "invalid_payload", f"Job {what} is nested too deeply or contains a cycle."
        ) from None


def _plain(value: Any, what: str, path: str, depth: int = 0) -> JsonValue:
    if depth > MAX_DEPTH and isinstance(value, dict | list):
        raise _bad(what, path[:40] + "…", f"it is nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, dict):
        out: dict[str, JsonValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _bad(what, path, f"key {key!r} is a {type(key).__name__}, not a str")
            out[_text(key, what, path, key=True)] = _plain(item, what, f"{path}.{key}", depth + 1)
        return out
    if isinstance(value, list):
        return [_plain(item, what, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
    if isinstance(value, BaseModel):
        return _plain(_dumped(value, what, path), what, path, depth)
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


def stored_result(value: Any, max_bytes: int) -> JsonValue:
    """A handler's result as it is stored, or the ``JobConfigError`` that refuses it.

    The refusal comes after the handler's work was done: its message says so, since the
    job is dead-lettered rather than retried (a retry would repeat the side effects and
    refuse the same result again).
    """
    try:
        return checked_json(value, max_bytes, "result")[0]
    except JobConfigError as refused:
        raise JobConfigError(
            refused.code,
            f"{refused} The handler ran to its end; a result that cannot be stored is "
            "not retried, so its work is not done again.",
        ) from None


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


def priority(value: object) -> int:
    """A signed 32-bit int: every store keeps it exactly and orders by it."""
    return integer(
        value,
        "priority",
        minimum=MIN_PRIORITY,
        maximum=MAX_PRIORITY,
        why="signed 32-bit",
        code="invalid_option",
    )


def page_limit(limit: object) -> int:
    return integer(limit, "limit", minimum=1, maximum=PAGE_LIMIT, code="invalid_option")
