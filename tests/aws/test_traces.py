"""The ``trace`` attribute: a failure's traceback shown only beside the error it was kept for."""

from __future__ import annotations

from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS
from sqsjobs.aws.wire.items import item_from_job, stored_from_item, text
from sqsjobs.aws.wire.traces import TRACE, error_write, packed_trace
from sqsjobs.core.tracebacks import FailureText

from .fakes import prepared

TRACE_TEXT = (
    "Traceback (most recent call last):\n"
    '  File "/srv/app/jobs.py", line 9, in charge\n'
    "KeyError: 'ß'"
)


def test_a_trace_written_over_by_a_release_without_traces_is_not_shown() -> None:
    item = item_from_job(prepared().job, None, DEFAULT_SHARDS)
    item["last_error"] = text("KeyError: 'ß'")
    item[TRACE] = packed_trace(FailureText("KeyError: 'ß'", TRACE_TEXT))
    assert stored_from_item(item).job.last_traceback == TRACE_TEXT

    item["last_error"] = text("JobTimeoutError: timed out after 30s")  # an older worker's write
    assert stored_from_item(item).job.last_traceback is None


def test_an_error_without_a_traceback_removes_the_one_kept_before() -> None:
    sets: dict[str, str] = {}
    values: dict[str, object] = {}
    assert error_write(sets, values, ("lease_token",), "JobTimeoutError: 30s") == (
        "lease_token",
        TRACE,
    )
    assert TRACE not in sets
    kept = error_write(sets, values, ("lease_token",), FailureText("E: x", TRACE_TEXT))
    assert kept == ("lease_token",) and sets[TRACE] == ":trace"
    assert values[":trace"] == packed_trace(FailureText("E: x", TRACE_TEXT))
