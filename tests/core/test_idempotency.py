"""Composed idempotency keys and the fingerprint that tells a duplicate from a conflict."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqsjobs import JobConfigError, job_idempotency_key
from sqsjobs.core.idempotency import fingerprint
from sqsjobs.core.validation import IDEMPOTENCY_KEY


@pytest.mark.parametrize(
    ("name", "key", "tenant", "composed"),
    [
        ("email.send", "order-1", None, "g/email.send/order-1"),
        ("email.send", "order-1", "acme", "t/acme/email.send/order-1"),
        ("a", "x/y.z", None, "g/a/x/y.z"),
        ("a", "~!", "t-1_2", "t/t-1_2/a/~!"),
    ],
)
def test_key_formats(name: str, key: str, tenant: str | None, composed: str) -> None:
    result = job_idempotency_key(name, key, tenant=tenant)
    assert result == composed
    assert IDEMPOTENCY_KEY.fullmatch(result)


@pytest.mark.parametrize("key", ["..", "a..b", "..a", "a.."])
def test_key_part_with_double_dot_rejected(key: str) -> None:
    with pytest.raises(JobConfigError) as caught:
        job_idempotency_key("a", key)
    assert caught.value.code == "invalid_option"
    assert str(caught.value) == f"Invalid idempotency key part {key!r}: must not contain '..'"


@pytest.mark.parametrize("key", ["", " ", "a b", "k\n", "é", "\x7f", 5, None])
def test_key_part_must_be_printable_ascii(key: Any) -> None:
    with pytest.raises(JobConfigError) as caught:
        job_idempotency_key("a", key)
    assert caught.value.code == "invalid_option"
    assert f"Invalid idempotency key part {key!r}" in str(caught.value)
    assert r"printable ASCII characters [\x21-\x7e]" in str(caught.value)


@pytest.mark.parametrize("tenant", ["", "ACME", "-a", "a-", "a b", "a\n", "x" * 64])
def test_tenant_must_follow_the_grammar(tenant: str) -> None:
    with pytest.raises(JobConfigError) as caught:
        job_idempotency_key("a", "k", tenant=tenant)
    assert caught.value.code == "invalid_option"
    assert f"Invalid tenant {tenant!r}" in str(caught.value)


@pytest.mark.parametrize("name", ["", "1a", "a\n", "a b"])
def test_name_must_follow_the_job_name_grammar(name: str) -> None:
    with pytest.raises(JobConfigError) as caught:
        job_idempotency_key(name, "k")
    assert caught.value.code == "invalid_name"


def test_composed_key_may_be_255_characters() -> None:
    assert len(job_idempotency_key("n", "k" * 251)) == 255  # "g/n/" + 251


@pytest.mark.parametrize(("tenant", "key"), [(None, "k" * 252), ("t", "k" * 250)])
def test_composed_key_over_255_characters_rejected(tenant: str | None, key: str) -> None:
    with pytest.raises(JobConfigError) as caught:
        job_idempotency_key("n", key, tenant=tenant)
    assert caught.value.code == "invalid_option"
    assert str(caught.value) == "Composed idempotency key is 256 characters; the limit is 255"


# -- fingerprint ------------------------------------------------------------------------


def test_fingerprint_is_sha256_of_the_canonical_json() -> None:
    canonical = '{"name":"a","payload":{"b":[1,"é"],"c":null},"tenant":null}'
    expected = hashlib.sha256(canonical.encode()).hexdigest()
    assert fingerprint("a", None, {"c": None, "b": [1, "é"]}) == expected


def test_fingerprint_ignores_key_order_at_every_depth() -> None:
    first = {"a": 1, "b": {"x": [1, {"p": 1, "q": 2}], "y": 2}}
    second = {"b": {"y": 2, "x": [1, {"q": 2, "p": 1}]}, "a": 1}
    assert fingerprint("n", "t", first) == fingerprint("n", "t", second)


@pytest.mark.parametrize(
    "other",
    [
        ("m", None, {"a": 1}),
        ("n", "t", {"a": 1}),
        ("n", None, {"a": 2}),
        ("n", None, [1]),
        ("n", None, {"a": 1.5}),
        ("n", None, None),
    ],
)
def test_fingerprint_differs_when_name_tenant_or_payload_differ(other: tuple[Any, ...]) -> None:
    assert fingerprint("n", None, {"a": 1}) != fingerprint(*other)


def test_fingerprint_keeps_list_order() -> None:
    assert fingerprint("n", None, [1, 2]) != fingerprint("n", None, [2, 1])


@given(st.dictionaries(st.text(), st.integers() | st.text() | st.none(), max_size=8))
def test_fingerprint_of_a_reversed_dict_is_the_same(payload: dict[str, Any]) -> None:
    reversed_payload = dict(reversed(list(payload.items())))
    assert fingerprint("n", None, payload) == fingerprint("n", None, reversed_payload)
