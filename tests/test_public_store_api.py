"""``sqsjobs.store``, the store SPI's public face: it exports exactly the protocols that
``sqsjobs.core.store``'s table documents, each runtime-checkable, and both shipped stores
have exactly the capabilities that table says. No AWS: an ``SqsJobStore`` is built
without a request, and none is sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import pytest

import sqsjobs
import sqsjobs.store
from sqsjobs import MemoryJobStore
from sqsjobs.aws import SqsJobStore
from sqsjobs.core import store as spi

ARCHITECTURE = Path(sqsjobs.__file__).parents[2] / "docs" / "explanation" / "architecture.md"
# What ``sqsjobs.store`` exports beside the protocols: the values their calls take and return.
VALUES = {
    "BatchStatus",
    "QueueStats",
    "RedriveProgress",
    "RedriveReport",
    "SlotTaken",
    "WorkerPresence",
}


class Row(NamedTuple):
    protocol: str
    memory: bool
    sqs: bool
    on_sync: bool  # the store's ``sync`` face has it, not the store itself


def table() -> list[Row]:
    """The rows of ``sqsjobs.core.store``'s table of protocols (its docstring)."""
    rows = []
    for line in (spi.__doc__ or "").splitlines():
        found = re.match(r"    ([A-Z]\w+Store) +(yes|no)( \(\w+\))? +(yes|no)( \(\w+\))? ", line)
        if found:
            name, memory, memory_note, sqs, _ = found.groups()
            rows.append(Row(name, memory == "yes", sqs == "yes", memory_note == " (sync)"))
    return rows


def protocols_of(module: Any) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if isinstance(value, type)
        and value is not Protocol
        and getattr(value, "_is_protocol", False)
    }


@pytest.fixture
def stores() -> Iterator[dict[str, Any]]:
    with SqsJobStore(
        table_name="jobs",
        queue_urls={"default": "http://127.0.0.1:9/000000000000/default"},
        endpoint_url="http://127.0.0.1:9",  # never reached: nothing here sends a request
        region_name="us-east-1",
    ) as sqs:
        yield {"memory": MemoryJobStore(), "sqs": sqs}


def test_the_table_has_a_row_per_protocol() -> None:
    names = [row.protocol for row in table()]
    assert len(names) == len(set(names)) > 10


def test_the_public_module_exports_exactly_the_protocols_of_the_table() -> None:
    exported = set(sqsjobs.store.__all__)
    assert protocols_of(sqsjobs.store) == {row.protocol for row in table()}
    assert exported == {row.protocol for row in table()} | VALUES
    assert sqsjobs.store.__all__ == sorted(sqsjobs.store.__all__)


def test_the_spi_module_defines_no_protocol_outside_the_table() -> None:
    """A protocol nothing in sqsjobs looks for belongs to the tests that use it."""
    assert protocols_of(spi) == {row.protocol for row in table()}


@pytest.mark.parametrize("name", sorted(row.protocol for row in table()))
def test_each_exported_protocol_is_runtime_checkable(name: str) -> None:
    protocol = getattr(sqsjobs.store, name)
    assert getattr(protocol, "_is_runtime_protocol", False), name
    assert protocol is getattr(spi, name)  # one definition, however it is imported
    assert name in (sqsjobs.store.__doc__ or "")  # the author's guide names it


def test_every_exported_name_exists() -> None:
    assert [name for name in sqsjobs.store.__all__ if not hasattr(sqsjobs.store, name)] == []


def test_the_package_root_keeps_its_store_names() -> None:
    assert sqsjobs.JobStore is sqsjobs.store.JobStore
    assert sqsjobs.SyncJobStore is sqsjobs.store.SyncJobStore


@pytest.mark.parametrize("kind", ["memory", "sqs"])
def test_each_store_has_exactly_the_capabilities_the_table_says(
    kind: str, stores: dict[str, Any]
) -> None:
    store = stores[kind]
    for row in table():
        protocol = getattr(sqsjobs.store, row.protocol)
        subject = store.sync if row.on_sync else store
        assert isinstance(subject, protocol) is getattr(row, kind), (kind, row.protocol)


def test_docs_architecture_lists_the_same_protocols() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## The store interface", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([A-Z]\w+Store)` \|", section, re.M))
    assert listed == {row.protocol for row in table()}


def test_the_protocols_0_2_declared_in_core_store_still_import_with_a_warning() -> None:
    import importlib

    from sqsjobs.core import operator_calls

    store = importlib.import_module("sqsjobs.core.store")
    for name in ("DeadLetterStore", "ReconcileStore", "SyncRetryStore", "SyncPresenceStore"):
        with pytest.warns(DeprecationWarning, match=f"sqsjobs.core.store.{name} is deprecated"):
            assert getattr(store, name) is getattr(operator_calls, name)
    with pytest.raises(AttributeError):
        store.NoSuchStore  # noqa: B018
