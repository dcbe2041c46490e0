"""A job's history as its record keeps it: ten slots, a count, and what a reader makes of them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqsjobs import HistoryEntry
from sqsjobs.aws.wire.entries import COUNT, entry_text, history_of, note, slot
from sqsjobs.core.history import attempt_entry

NOW = 1_796_094_741.2439704


def failed(n: int, error: str = "ConnectionError: entrepôt injoignable «Zoë»") -> HistoryEntry:
    return attempt_entry(NOW + n, n + 1, (NOW + n - 0.5, "ip-10-0-3-17:4711"), "retry", error)


def record(entries: dict[int, HistoryEntry], count: int | None, **more: Any) -> dict[str, Any]:
    item: dict[str, Any] = {slot(n): {"S": entry_text(e, n)} for n, e in entries.items()}
    if count is not None:
        item[COUNT] = {"N": str(count)}
    return item | more


def test_an_entry_reads_back_as_written_and_an_attempt_leaves_its_kind_out() -> None:
    entry = failed(0)
    text = entry_text(entry, 0)
    assert '"k"' not in text and "«Zoë»" in text  # most entries are attempts; UTF-8 as it is
    assert history_of(record({0: entry}, 1)) == ([entry], 1)
    action = HistoryEntry(
        at=datetime.fromtimestamp(NOW, UTC),
        kind="retry",
        attempt=None,
        started_at=None,
        worker=None,
        outcome="queued",
        by="cli:ana@ops-bastion",
    )
    assert '"k":"retry"' in entry_text(action, 1)
    assert history_of(record({0: entry, 1: action}, 2)) == ([entry, action], 2)


def test_slots_are_read_in_order_and_only_the_last_ten_numbers_count() -> None:
    entries = {n: failed(n) for n in range(3, 13)}  # 13 written: 0, 1 and 2 written over
    stale = {2: failed(2)}  # as if a slot still held the entry ten before
    item = record(entries, 13) | {slot(12): {"S": entry_text(entries[12], 12)}}
    assert history_of(item) == ([entries[n] for n in range(3, 13)], 13)
    assert history_of(record(entries | stale, 13))[0][0] == entries[3]


def test_a_record_of_an_earlier_release_reads_as_an_empty_history() -> None:
    assert history_of({"status": {"S": "completed"}, "completed_at": {"N": str(NOW)}}) == ([], 0)


def test_a_completion_counted_without_a_slot_is_read_off_the_record() -> None:
    item = record({}, 1, status={"S": "completed"}, completed_at={"N": str(NOW)})
    item["attempts"] = {"N": "1"}
    [entry], count = history_of(item)
    assert count == 1
    assert (entry.kind, entry.attempt, entry.outcome) == ("attempt", 1, "completed")
    assert (entry.at, entry.worker, entry.started_at) == (
        datetime.fromtimestamp(NOW, UTC),
        None,
        None,
    )


def test_a_slot_that_does_not_decode_is_left_out_not_fatal() -> None:
    item = record({0: failed(0)}, 3) | {slot(1): {"S": "{not json"}, slot(2): {"S": '{"n":2}'}}
    assert history_of(item) == ([failed(0)], 3)


def test_an_update_adds_the_slot_and_counts_in_the_expression() -> None:
    sets: dict[str, str] = {}
    values: dict[str, Any] = {}
    note(sets, values, (failed(0), 12))
    assert sets == {COUNT: "if_not_exists(#hist_n, :hist_zero) + :hist_one", "h2": ":hist_entry"}
    assert values[":hist_entry"] == {"S": entry_text(failed(0), 12)}
    counted: dict[str, str] = {}
    note(counted, {}, (None, 0))  # a first completion: counted only
    assert list(counted) == [COUNT]
