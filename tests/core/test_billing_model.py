"""The DynamoDB cost model on hand-built images: sizes as AWS counts them, index writes."""

from __future__ import annotations

import pytest

from sqsjobs.testing.billing import (
    Charge,
    Index,
    Schema,
    attribute_size,
    dollars_per_million_jobs,
    item_size,
    read_units,
    write_charges,
    write_units,
)

BY_STATUS = Index("by_status", ("gsi_pk", "gsi_sk"))
SCHEMA = Schema("jobs", ("pk",), (BY_STATUS,))


def job(status: str, **extra: dict[str, str]) -> dict[str, dict[str, str]]:
    return {
        "pk": {"S": "job#a1"},
        "status": {"S": status},
        "payload": {"S": '{"n":1}'},
        "gsi_pk": {"S": f"{status}#2"},
        "gsi_sk": {"S": "default#1764620000.123456#a1"},
        **extra,
    }


def test_strings_count_utf8_bytes_of_name_and_value() -> None:
    assert item_size({"name": {"S": "Zoë"}}) == 4 + 4
    assert item_size({"naïve": {"S": "東京"}}) == 6 + 6
    assert item_size({"e": {"S": "🎉"}}) == 1 + 4


@pytest.mark.parametrize(
    ("number", "size"),
    [
        ("1", 2),
        ("12", 2),
        ("123", 3),
        ("1000", 2),  # trailing zeroes trimmed
        ("0.001", 2),  # leading zeroes trimmed
        ("-12.5", 3),
        ("1764620000.123456", 9),  # a time.time() reading: 16 significant digits
        ("1E3", 2),
    ],
)
def test_numbers_cost_a_byte_per_two_significant_digits_plus_one(number: str, size: int) -> None:
    assert attribute_size({"N": number}) == size


def test_other_types() -> None:
    assert attribute_size({"B": "AAEC"}) == 3  # base64 of 3 raw bytes
    assert attribute_size({"BOOL": True}) == attribute_size({"NULL": True}) == 1
    assert attribute_size({"SS": ["ab", "ç"]}) == 4
    assert attribute_size({"L": []}) == attribute_size({"M": {}}) == 3
    assert attribute_size({"L": [{"S": "ab"}, {"N": "7"}]}) == 3 + (1 + 2) + (1 + 2)
    assert attribute_size({"M": {"k": {"S": "v"}}}) == 3 + 1 + 1 + 1
    with pytest.raises(ValueError, match="unknown attribute type 'X'"):
        attribute_size({"X": 1})


def test_writes_round_up_to_a_kilobyte_and_cost_at_least_one() -> None:
    assert [write_units(size) for size in (0, 1, 1024, 1025, 2048, 10_241)] == [1, 1, 1, 2, 2, 11]


def test_an_item_at_the_kilobyte_boundary() -> None:
    exactly = {"p": {"S": "x" * 1023}}  # 1 + 1023 bytes
    over = {"p": {"S": "x" * 1024}}
    assert item_size(exactly) == 1024
    assert write_charges(Schema("t", ("p",)), None, exactly, succeeded=True)[0].units == 1
    assert write_charges(Schema("t", ("p",)), None, over, succeeded=True)[0].units == 2


def test_reads_round_up_to_four_kilobytes_and_halve_when_eventually_consistent() -> None:
    assert read_units([3500], consistent=True) == 1
    assert read_units([3500], consistent=False) == 0.5
    assert read_units([10 * 1024], consistent=True) == 3
    assert read_units([], consistent=True) == 1  # a miss still costs a unit
    # BatchGetItem rounds each item; Query rounds the sum.
    assert read_units([1536, 6656], consistent=True, each=True) == 3
    assert read_units([1536, 6656], consistent=True) == 2


def test_entering_the_index_is_one_index_write() -> None:
    charges = write_charges(SCHEMA, None, job("queued"), succeeded=True)
    assert charges == [
        Charge(None, "job#a1", 1, "put"),
        Charge("by_status", "queued#2", 1, "put"),
    ]


def test_leaving_the_index_is_one_index_write() -> None:
    charges = write_charges(SCHEMA, job("queued"), None, succeeded=True)
    assert charges == [
        Charge(None, "job#a1", 1, "delete"),
        Charge("by_status", "queued#2", 1, "delete"),
    ]
    after = job("queued")
    del after["gsi_pk"]  # a sparse index: an item without the key leaves it
    assert write_charges(SCHEMA, job("queued"), after, succeeded=True)[1:] == [
        Charge("by_status", "queued#2", 1, "delete")
    ]


def test_changing_an_index_key_is_a_delete_and_a_put() -> None:
    charges = write_charges(SCHEMA, job("queued"), job("running"), succeeded=True)
    assert charges == [
        Charge(None, "job#a1", 1, "update"),
        Charge("by_status", "queued#2", 1, "delete"),
        Charge("by_status", "running#2", 1, "put"),
    ]


def test_a_projected_change_is_one_write_and_no_change_is_none() -> None:
    before, after = job("running"), job("running", lease_until={"N": "1764620030.5"})
    assert write_charges(SCHEMA, before, after, succeeded=True)[1:] == [
        Charge("by_status", "running#2", 1, "update")
    ]
    assert write_charges(SCHEMA, before, before, succeeded=True)[1:] == []


def test_keys_only_and_include_projections_ignore_other_attributes() -> None:
    keys_only = Index("keys", ("gsi_pk", "gsi_sk"), "KEYS_ONLY")
    include = Index("inc", ("gsi_pk", "gsi_sk"), "INCLUDE", frozenset({"status"}))
    schema = Schema("jobs", ("pk",), (keys_only, include))
    before, after = job("running"), job("running", lease_until={"N": "1764620030.5"})
    assert write_charges(schema, before, after, succeeded=True) == [
        Charge(None, "job#a1", 1, "update")
    ]
    after["status"] = {"S": "running, still"}
    assert write_charges(schema, before, after, succeeded=True)[1:] == [
        Charge("inc", "running#2", 1, "update")
    ]


def test_an_update_is_sized_by_the_larger_image_and_the_index_by_its_projection() -> None:
    big = job("queued", payload={"S": "x" * 10_000})
    running = dict(big, status={"S": "running"}, gsi_pk={"S": "running#2"})
    size = item_size(big)
    assert 10 * 1024 > size > 9 * 1024
    charges = write_charges(SCHEMA, big, running, succeeded=True)
    assert [charge.units for charge in charges] == [10, 10, 10]
    keys_only = Schema("jobs", ("pk",), (Index("k", ("gsi_pk", "gsi_sk"), "KEYS_ONLY"),))
    assert [c.units for c in write_charges(keys_only, big, running, succeeded=True)] == [10, 1, 1]
    shrunk = dict(running, payload={"S": "{}"})
    assert write_charges(SCHEMA, big, shrunk, succeeded=True)[0].units == 10


def test_a_refused_write_bills_the_larger_item_and_no_index() -> None:
    existing = job("queued", payload={"S": "x" * 3000})
    attempted = job("queued", payload={"S": "y" * 5000})
    assert write_charges(SCHEMA, existing, existing, succeeded=False, attempted=attempted) == [
        Charge(None, "job#a1", 5, "refused")
    ]
    assert write_charges(SCHEMA, None, None, succeeded=False, attempted=job("queued")) == [
        Charge(None, "job#a1", 1, "refused")
    ]


def test_dollars_at_list_prices() -> None:
    assert dollars_per_million_jobs(8, 0, 0) == 5.0
    assert dollars_per_million_jobs(0, 1, 1) == pytest.approx(0.525)
