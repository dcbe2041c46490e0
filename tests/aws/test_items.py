"""The item codec and key schema: exact round trips, sortable keys, deterministic ids."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sqsjobs import JobStatus
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS, index_pk, index_sk, shard
from sqsjobs.aws.wire.items import item_from_job, keyed_id, number, stored_from_item

from .fakes import NOW, prepared


@pytest.mark.parametrize("payload", [None, 0, -1.5, "é✓", [1, {"a": None}], {"n": 1e-7}])
def test_a_job_survives_the_codec_exactly(payload: object) -> None:
    made = prepared(payload, at=NOW + 0.123456, idempotency_key="k", tenant="acme", priority=-3)
    item = item_from_job(made.job, made.fingerprint, DEFAULT_SHARDS)
    decoded = stored_from_item(item)
    assert decoded.job == made.job
    assert (decoded.fingerprint, decoded.expires_at) == (made.fingerprint, None)


def test_decoded_jobs_get_empty_containers_of_their_own() -> None:
    """A record without labels, parents, children or history decodes to new empty ones
    (``constructed_job``), never one object shared between jobs."""
    made = prepared({"to": "zoë@example.com"}, at=NOW, tenant="acme")
    item = item_from_job(made.job, made.fingerprint, DEFAULT_SHARDS)
    first, second = stored_from_item(item).job, stored_from_item(item).job
    for name in ("labels", "after", "children", "history"):
        assert getattr(first, name) == getattr(second, name) == type(getattr(first, name))()
        assert getattr(first, name) is not getattr(second, name), name


@pytest.mark.parametrize("value", [2**53 + 1, -(2**63) - 1, 10**30 + 7])
def test_integer_attributes_are_read_exactly(value: int) -> None:
    """Through a float, 2**53 + 1 would come back as 2**53."""
    item = item_from_job(prepared().job, None, DEFAULT_SHARDS)
    item["priority"] = item["attempts"] = item["max_attempts"] = {"N": str(value)}
    job = stored_from_item(item).job
    assert (job.priority, job.attempts, job.max_attempts) == (value, value, value)


@pytest.mark.parametrize("text", ["1.5", "NaN", "Infinity", "x"])
def test_an_integer_attribute_that_is_no_integer_is_undecodable(text: str) -> None:
    item = item_from_job(prepared().job, None, DEFAULT_SHARDS)
    item["attempts"] = {"N": text}
    with pytest.raises((ValueError, ArithmeticError)):
        stored_from_item(item)


@pytest.mark.parametrize("value", [1e-7, 1_800_000_000.123456, 0.1 + 0.2, 3, -2.5e20])
def test_numbers_are_plain_decimals_that_read_back_exactly(value: float) -> None:
    text = number(value)["N"]
    assert "e" not in text.lower()
    assert float(text) == value


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_number_is_the_decimal_text_of_its_shortest_repr(value: float) -> None:
    assert number(value)["N"] == format(Decimal(repr(value)), "f")


def test_keyed_ids_depend_on_queue_tenant_and_key() -> None:
    assert keyed_id("default", "acme", "k") == keyed_id("default", "acme", "k")
    triples = [
        ("default", "acme", "k"),
        ("other", "acme", "k"),
        ("default", "acme", "j"),
        ("default", "globex", "k"),
        ("default", None, "k"),
    ]
    assert len({keyed_id(*triple) for triple in triples}) == len(triples)
    assert len(keyed_id("default", None, "k")) == 32


@pytest.mark.parametrize(
    ("one", "two"),
    [
        # Tenant ids that spell a no-tenant marker are tenants, not the no-tenant scope.
        (("default", None, "k"), ("default", "null", "k")),
        (("default", None, "k"), ("default", "none", "k")),
        # Parts that a plain join would run together stay apart.
        (("default", "a", "b/k"), ("default", "a-b", "k")),
        (("q", "a", "k"), ("q-a", None, "k")),
        (("default", None, "acme/k"), ("default", "acme", "k")),
        (("default", None, "k"), ("default", "", "k")),
    ],
)
def test_keyed_ids_are_unambiguous(
    one: tuple[str, str | None, str], two: tuple[str, str | None, str]
) -> None:
    assert keyed_id(*one) != keyed_id(*two)


def test_index_keys_sort_by_queue_then_time_then_id() -> None:
    keys = [index_sk("a", 9.5, "z"), index_sk("a", 10.0, "a"), index_sk("a", 10.0, "b")]
    assert sorted(keys) == keys
    assert index_sk("a", 1e12, "x") < "a$" < index_sk("a-b", 0.0, "x")
    assert {shard(str(n), DEFAULT_SHARDS) for n in range(100)} == set(range(DEFAULT_SHARDS))
    assert {shard(str(n), 16) for n in range(400)} == set(range(16))
    assert index_pk(JobStatus.QUEUED, 3) == "queued#3"
