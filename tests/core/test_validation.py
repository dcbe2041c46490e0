"""Every rule of the validation table (SPEC §2.3), applied by ``prepare`` before any write."""

from __future__ import annotations

import enum
import math
import sys
import uuid
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from sqsjobs import EnqueueRequest, Job, JobConfigError, JobQueue, JobStatus, MemoryJobStore
from sqsjobs.core.validation import checked_json, plain_json
from sqsjobs.producer.enqueue import prepare

from ..support.config import NOW, make_config

CONFIG = make_config()


def build(name: Any = "email.send", payload: Any = None, **options: Any) -> Job:
    return prepare(CONFIG, EnqueueRequest(name, payload, **options), NOW).job


def rejected(code: str, name: Any = "email.send", payload: Any = None, **options: Any) -> str:
    with pytest.raises(JobConfigError) as caught:
        build(name, payload, **options)
    assert caught.value.code == code
    return str(caught.value)


# -- names and grammars -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "Z", "email.send", "a1._:-", "a" * 128, "Reports:nightly"])
def test_job_name_accepted(name: str) -> None:
    assert build(name).name == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "1email",
        "_email",
        ".email",
        "email send",
        "email\n",
        "email\r",
        "\nemail",
        "é",
        "email/x",
        "a" * 129,
        None,
        5,
    ],
)
def test_job_name_rejected(name: Any) -> None:
    message = rejected("invalid_name", name)
    assert repr(name) in message
    assert "[a-zA-Z][a-zA-Z0-9._:-]{0,127}" in message


def test_job_name_with_trailing_newline_has_the_documented_message() -> None:
    message = rejected("invalid_name", "email\n")
    assert message == r"Invalid job name 'email\n': must match [a-zA-Z][a-zA-Z0-9._:-]{0,127}"


@pytest.mark.parametrize("queue", ["default", "other", "1", "a-b_c:d", "q" * 64])
def test_queue_name_accepted(queue: str) -> None:
    assert build(queue=queue).queue == queue


@pytest.mark.parametrize("queue", ["", "q" * 65, "a.b", "a b", "default\n", "é", 7])
def test_queue_name_rejected(queue: Any) -> None:
    message = rejected("invalid_name", queue=queue)
    assert f"Invalid queue name {queue!r}" in message
    assert "[a-zA-Z0-9_:-]{1,64}" in message


@pytest.mark.parametrize("key", ["k", "~", "!" * 255, "order-1/line:2", "a.b", "g/x/y"])
def test_idempotency_key_accepted(key: str) -> None:
    assert build(idempotency_key=key).idempotency_key == key


@pytest.mark.parametrize("key", ["", "a b", " k", "k\n", "k\t", "k\x7f", "é", "!" * 256, 1])
def test_idempotency_key_rejected(key: Any) -> None:
    message = rejected("invalid_option", idempotency_key=key)
    assert f"Invalid idempotency key {key!r}" in message
    assert r"[\x21-\x7e]{1,255}" in message


@pytest.mark.parametrize("tenant", ["a", "0", "acme", "a-b_c", "a" + "b" * 61 + "c"])
def test_tenant_accepted(tenant: str) -> None:
    assert build(tenant=tenant).tenant == tenant


@pytest.mark.parametrize(
    "tenant", ["", "Acme", "-a", "a-", "_a", "a_", "a" * 64, "acme\n", "ac me", "a.b", 3]
)
def test_tenant_rejected(tenant: Any) -> None:
    message = rejected("invalid_option", tenant=tenant)
    assert f"Invalid tenant {tenant!r}" in message
    assert "[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?" in message


# -- payloads ---------------------------------------------------------------------------


class Color(enum.StrEnum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Ratio(float):
    pass


class Address(BaseModel):
    city: str
    since: datetime
    ref: uuid.UUID


@pytest.mark.parametrize(
    "payload",
    [
        None,
        True,
        False,
        0,
        -1,
        2**70,
        1.5,
        "",
        "text",
        [],
        {},
        [1, "a", None],
        {"a": {"b": [1, 2.5, {"c": None}]}},
    ],
)
def test_json_payload_is_stored_unchanged(payload: Any) -> None:
    assert build(payload=payload).payload == payload


def test_enum_members_and_numeric_subclasses_are_stored_as_plain_values() -> None:
    payload = build(payload={Color.RED: [Color.RED, Level.HIGH, Ratio(0.5)]}).payload
    assert payload == {"red": ["red", 3, 0.5]}
    assert isinstance(payload, dict)
    [key] = payload
    values = payload[key]
    assert isinstance(values, list)
    assert [type(key), *map(type, values)] == [str, str, int, float]


def test_pydantic_model_is_dumped_in_json_mode() -> None:
    ref = uuid.UUID(int=7)
    model = Address(city="Oslo", since=datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC), ref=ref)
    assert build(payload={"to": model}).payload == {
        "to": {"city": "Oslo", "since": "2030-01-02T03:04:05Z", "ref": str(ref)}
    }


class Opaque:
    pass


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (math.nan, "nan is not a finite number"),
        (math.inf, "inf is not a finite number"),
        ({"x": [1, -math.inf]}, "-inf is not a finite number"),
        ({1: "x"}, "key 1 is a int, not a str"),
        ({None: "x"}, "key None is a NoneType, not a str"),
        ({True: "x"}, "key True is a bool, not a str"),
        ({(1, 2): "x"}, "key (1, 2) is a tuple, not a str"),
        (b"x", "a bytes is not JSON"),
        (bytearray(b"x"), "a bytearray is not JSON"),
        ({1, 2}, "a set is not JSON"),
        (frozenset({1}), "a frozenset is not JSON"),
        ((1, 2), "a tuple is not JSON"),
        (datetime(2030, 1, 1, tzinfo=UTC), "a datetime is not JSON"),
        (date(2030, 1, 1), "a date is not JSON"),
        (Decimal("1.5"), "a Decimal is not JSON"),
        (1j, "a complex is not JSON"),
        (Opaque(), "a Opaque is not JSON"),
        (Color, "a EnumType is not JSON"),
    ],
)
def test_non_json_payload_rejected(payload: Any, reason: str) -> None:
    message = rejected("invalid_payload", payload=payload)
    assert reason in message
    assert "Allowed: dict with str keys, list, str, int, finite float, bool, None" in message


def test_payload_error_names_the_path_to_the_bad_value() -> None:
    message = rejected("invalid_payload", payload={"order": {"lines": [1, (2, 3)]}})
    assert "at $.order.lines[1]: a tuple is not JSON" in message


def test_cyclic_payload_rejected() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    message = rejected("invalid_payload", payload=cycle)
    assert "nested more than 200 levels deep" in message


def nested(levels: int) -> Any:
    """``levels`` containers, a dict and a list by turns, around one string."""
    value: Any = "Grüße"
    for level in range(levels):
        value = {"n": value} if level % 2 else [value]
    return value


async def test_a_payload_nested_as_deep_as_every_reader_of_a_job_can_take_is_accepted() -> None:
    queue = JobQueue(MemoryJobStore())
    job = (await queue.enqueue("tree.walk", nested(201))).job  # levels 0 to 200
    stored = await queue.get(job.id)
    assert stored is not None and stored.payload == nested(201)
    stored.model_dump(mode="json")  # what the CLI and the dashboard print
    stored.model_dump_json()


def test_a_payload_nested_deeper_than_that_is_refused_before_anything_is_written() -> None:
    message = rejected("invalid_payload", payload=nested(202))
    assert "nested more than 200 levels deep" in message
    assert len(message) < 400  # the path is cut short, the rule stays readable


DIGITS = sys.get_int_max_str_digits()


class Note(BaseModel):
    title: str
    tags: dict[str, int]
    count: int = 0
    extra: Any = None


@pytest.mark.parametrize(
    ("payload", "path", "reason"),
    [
        (10**DIGITS, "$", f"an int of more than {DIGITS} digits"),
        ({"n": [1, -(10**DIGITS)]}, "$.n[1]", f"an int of more than {DIGITS} digits"),
        ("caf\ud800e", "$", "a str with a lone surrogate '\\ud800' at index 3"),
        ({"to": ["ok", "\udfff"]}, "$.to[1]", "a str with a lone surrogate '\\udfff' at index 0"),
        ({"k\udc80": 1}, "$", "key 'k\\udc80' has a lone surrogate '\\udc80' at index 1"),
        ({"a": {"b\ud83d": None}}, "$.a", "key 'b\\ud83d' has a lone surrogate"),
        (Note(title="\ud800", tags={}), "$.title", "a str with a lone surrogate '\\ud800'"),
        ({"note": Note(title="t", tags={}, count=10**DIGITS)}, "$.note.count", "an int of more"),
        ({"note": Note(title="t", tags={}, extra=Opaque())}, "$.note", "the Note model could not"),
    ],
    ids=[
        "int",
        "nested-int",
        "str",
        "nested-str",
        "key",
        "nested-key",
        "model-str",
        "model-int",
        "model-unserializable",
    ],
)
def test_payload_that_cannot_be_encoded_rejected(payload: Any, path: str, reason: str) -> None:
    message = rejected("invalid_payload", payload=payload)
    assert f"Job payload at {path}: " in message
    assert reason in message
    message.encode()  # the message itself can be printed, logged and stored


def test_surrogate_in_a_key_on_the_path_is_escaped_in_the_message() -> None:
    message = rejected("invalid_payload", payload={"\ud800x": {"y": 2**DIGITS * 10**DIGITS}})
    assert "Job payload at $.\\ud800x.y: an int of more than" in message


def test_largest_encodable_int_and_characters_beyond_the_bmp_accepted() -> None:
    payload = {"n": 10**DIGITS - 1, "emoji": "\U0001f600 caf\u00e9", "😀": -(10**DIGITS - 1)}
    assert build(payload=payload).payload == payload


def test_unencodable_payload_never_reaches_the_idempotency_fingerprint() -> None:
    message = rejected("invalid_payload", payload={"x": "\udc00"}, idempotency_key="order-7")
    assert "lone surrogate" in message


@pytest.mark.parametrize(
    "result", [10**DIGITS, {"out": "\ud800"}, {"\udfff": 1}], ids=["int", "str", "key"]
)
def test_result_that_cannot_be_encoded_is_refused_like_a_payload(result: Any) -> None:
    with pytest.raises(JobConfigError) as caught:
        checked_json(result, 65536, "result")
    assert caught.value.code == "invalid_payload"
    assert str(caught.value).startswith("Job result at $")


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda children: st.lists(children) | st.dictionaries(st.text(), children),
        max_leaves=20,
    )
)
def test_any_plain_json_round_trips_unchanged(value: Any) -> None:
    assert plain_json(value) == value


# -- payload size -----------------------------------------------------------------------

LIMIT = 65536


def test_size_is_counted_in_utf8_bytes_of_compact_json_at_the_limit() -> None:
    payload = "é" * 32767  # '"' + 32767 two-byte characters + '"' = 65536 bytes
    assert build(payload=payload).payload == payload


def test_size_one_byte_over_the_limit_rejected() -> None:
    message = rejected("payload_too_large", payload="é" * 32767 + "a")
    assert "65537 bytes as JSON (UTF-8); the limit is 65536 bytes" in message


def test_size_counts_bytes_not_characters() -> None:
    payload = "é" * 32768  # 32770 characters, 65538 bytes
    message = rejected("payload_too_large", payload=payload)
    assert "65538 bytes" in message


@pytest.mark.parametrize(("limit", "accepted"), [(7, True), (6, False)])
def test_size_uses_compact_separators(limit: int, accepted: bool) -> None:
    config = make_config(payload_max_bytes=limit)  # {"a":1} is 7 bytes
    request = EnqueueRequest("n", {"a": 1})
    if accepted:
        assert prepare(config, request, NOW).job.payload == {"a": 1}
    else:
        with pytest.raises(JobConfigError) as caught:
            prepare(config, request, NOW)
        assert caught.value.code == "payload_too_large"


# -- delay and run_at -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "run_at", "status"),
    [
        ({}, NOW, JobStatus.QUEUED),
        ({"delay": 0}, NOW, JobStatus.QUEUED),
        ({"delay": 2.5}, NOW + 2.5, JobStatus.DELAYED),
        ({"delay": timedelta(minutes=1)}, NOW + 60, JobStatus.DELAYED),
        ({"run_at": datetime.fromtimestamp(NOW + 10, UTC)}, NOW + 10, JobStatus.DELAYED),
        ({"run_at": datetime.fromtimestamp(NOW - 10, UTC)}, NOW - 10, JobStatus.QUEUED),
        ({"run_at": datetime.fromtimestamp(NOW, UTC)}, NOW, JobStatus.QUEUED),
        (
            {"run_at": datetime.fromtimestamp(NOW + 5, timezone(timedelta(hours=2)))},
            NOW + 5,
            JobStatus.DELAYED,
        ),
    ],
)
def test_delay_and_run_at_set_run_at_and_status(
    options: dict[str, Any], run_at: float, status: JobStatus
) -> None:
    job = build(**options)
    assert job.run_at == datetime.fromtimestamp(run_at, UTC)
    assert job.run_at.tzinfo is UTC
    assert job.status is status


DAY = 86_400.0
YEAR_AND_A_DAY = 366 * DAY


@pytest.mark.parametrize("delay", [-1, -0.001, math.nan, math.inf, True, "5", timedelta(-1)])
def test_bad_delay_rejected(delay: Any) -> None:
    message = rejected("invalid_option", delay=delay)
    assert message == (
        f"Invalid delay {delay!r}: must be a finite number of seconds >= 0 and <= 31622400 "
        "(366 days) or a timedelta"
    )


@pytest.mark.parametrize(
    "delay",
    [
        YEAR_AND_A_DAY + 0.001,
        1e300,
        pytest.param(2**1100, id="2**1100"),
        timedelta(days=366, microseconds=1),
        timedelta.max,
    ],
)
def test_delay_beyond_a_year_and_a_day_rejected(delay: Any) -> None:
    message = rejected("invalid_option", delay=delay)
    assert message.startswith(f"Invalid delay {delay!r}: ")
    assert "<= 31622400 (366 days)" in message


@pytest.mark.parametrize("delay", [YEAR_AND_A_DAY, timedelta(days=366), 31_536_000.123456])
def test_delay_up_to_a_year_and_a_day_accepted(delay: Any) -> None:
    seconds = delay.total_seconds() if isinstance(delay, timedelta) else delay
    assert build(delay=delay).run_at == datetime.fromtimestamp(NOW + seconds, UTC)


def _ahead(seconds: float, tz: timezone = UTC) -> datetime:
    return datetime.fromtimestamp(NOW, tz) + timedelta(seconds=seconds)


@pytest.mark.parametrize(
    "run_at",
    [
        _ahead(YEAR_AND_A_DAY + 0.001),
        _ahead(YEAR_AND_A_DAY + 1, timezone(timedelta(hours=-9, minutes=-30))),
        datetime.max.replace(tzinfo=UTC),
        datetime.max.replace(tzinfo=timezone(timedelta(hours=-23))),
        datetime.max.replace(tzinfo=timezone(timedelta(hours=14))),
    ],
)
def test_run_at_beyond_a_year_and_a_day_rejected(run_at: datetime) -> None:
    message = rejected("invalid_option", run_at=run_at)
    assert message.startswith(f"Invalid run_at {run_at!r}: must be at most 366 days ")


@pytest.mark.parametrize(
    "run_at",
    [
        _ahead(YEAR_AND_A_DAY),
        _ahead(YEAR_AND_A_DAY, timezone(timedelta(hours=5, minutes=45))),
        datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(1, 1, 1, tzinfo=UTC),
        datetime.min.replace(tzinfo=timezone(timedelta(hours=-3))),
    ],
)
def test_run_at_up_to_a_year_and_a_day_or_in_the_past_accepted(run_at: datetime) -> None:
    job = build(run_at=run_at)
    assert job.run_at == run_at
    expected = JobStatus.DELAYED if run_at.timestamp() > NOW else JobStatus.QUEUED
    assert job.status is expected


def test_run_at_before_the_first_utc_instant_rejected() -> None:
    run_at = datetime.min.replace(tzinfo=timezone(timedelta(hours=5)))  # 0000-12-31T19:00Z
    message = rejected("invalid_option", run_at=run_at)
    assert message == (
        f"Invalid run_at {run_at!r}: must fall between 0001-01-01 and 9999-12-31 in UTC"
    )


@pytest.mark.parametrize("run_at", [datetime(2030, 1, 1), "2030-01-01T00:00:00Z", NOW])
def test_naive_or_non_datetime_run_at_rejected(run_at: Any) -> None:
    message = rejected("invalid_option", run_at=run_at)
    assert f"Invalid run_at {run_at!r}" in message
    assert "timezone-aware datetime" in message


def test_delay_and_run_at_together_rejected() -> None:
    message = rejected("invalid_option", delay=1, run_at=datetime.fromtimestamp(NOW, UTC))
    assert message == "Pass delay or run_at, not both."


# -- numeric options --------------------------------------------------------------------


@pytest.mark.parametrize("priority", [0, -5, 10**6, -(2**31), 2**31 - 1, Level.HIGH])
def test_priority_accepted(priority: int) -> None:
    job = build(priority=priority)
    assert job.priority == priority
    assert type(job.priority) is int


@pytest.mark.parametrize(
    "priority", [True, False, 1.0, "1", None, 2**31, -(2**31) - 1, 2**53 + 1, -(10**40)]
)
def test_priority_must_be_a_signed_32_bit_int_not_a_bool(priority: Any) -> None:
    message = rejected("invalid_option", priority=priority)
    assert message == (
        f"Invalid priority {priority!r}: must be an int from -2147483648 to 2147483647 "
        "(signed 32-bit)"
    )


@pytest.mark.parametrize("max_attempts", [1, 2, 100])
def test_max_attempts_accepted(max_attempts: int) -> None:
    assert build(max_attempts=max_attempts).max_attempts == max_attempts


@pytest.mark.parametrize("max_attempts", [True, 0, -1, 1.5, "3"])
def test_max_attempts_must_be_an_int_of_at_least_one(max_attempts: Any) -> None:
    message = rejected("invalid_option", max_attempts=max_attempts)
    assert message == f"Invalid max_attempts {max_attempts!r}: must be an int >= 1"


@pytest.mark.parametrize(
    ("timeout", "stored"),
    [
        (0, 0.0),
        (0.5, 0.5),
        (timedelta(seconds=90), 90.0),
        (7 * DAY, 7 * DAY),
        (timedelta(days=7), 7 * DAY),
    ],
)
def test_timeout_accepted(timeout: Any, stored: float) -> None:
    assert build(timeout=timeout).timeout == stored


@pytest.mark.parametrize(
    "timeout",
    [
        -1,
        math.nan,
        math.inf,
        True,
        "1",
        7 * DAY + 0.001,
        1e300,
        timedelta(days=7, microseconds=1),
        timedelta.max,
    ],
)
def test_bad_timeout_rejected(timeout: Any) -> None:
    message = rejected("invalid_option", timeout=timeout)
    assert message == (
        f"Invalid timeout {timeout!r}: must be a finite number of seconds >= 0 and <= 604800 "
        "(7 days) or a timedelta"
    )


@pytest.mark.parametrize(
    ("lease", "stored"),
    [
        (0.5, 0.5),
        (timedelta(minutes=2), 120.0),
        (43_200, 43_200.0),
        (timedelta(hours=12), 43_200.0),
    ],
)
def test_lease_accepted(lease: Any, stored: float) -> None:
    assert build(lease=lease).lease == stored


@pytest.mark.parametrize(
    "lease",
    [
        0,
        -1,
        math.nan,
        math.inf,
        False,
        timedelta(0),
        43_200.001,
        1e300,
        pytest.param(10**400, id="10**400"),
        timedelta(hours=12, microseconds=1),
        timedelta.max,
    ],
)
def test_bad_lease_rejected(lease: Any) -> None:
    message = rejected("invalid_option", lease=lease)
    assert message == (
        f"Invalid lease {lease!r}: must be a finite number of seconds > 0 and <= 43200 "
        "(SQS's visibility cap) or a timedelta"
    )


def test_lease_error_reads_as_documented() -> None:
    assert rejected("invalid_option", lease=1e300) == (
        "Invalid lease 1e+300: must be a finite number of seconds > 0 and <= 43200 "
        "(SQS's visibility cap) or a timedelta"
    )


@pytest.mark.parametrize("option", ["priority", "lease", "timeout", "delay"])
def test_an_int_too_long_to_print_is_refused_with_a_readable_message(option: str) -> None:
    message = rejected("invalid_option", **{option: 10**DIGITS})
    assert message.startswith(f"Invalid {option} <an int of more than {DIGITS} digits>: must be ")
