"""``jobs show`` tells a job's story: its attempts, their errors, and who ran it again.

A dead job retried with ``jobs retry`` is back to ``queued 0/2`` with its old error; its
history says it died after attempt 2 and was retried by the operator who ran the
command, and ``--json`` carries every entry.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from sqsjobs import Backoff, HistoryEntry, JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.cli._actor import operator
from sqsjobs.cli._render import job_detail

from .conftest import Env, invoke
from .test_earlier_error import job, shown

CALLS: list[str] = []


async def charge(ctx: JobContext) -> str:
    CALLS.append(ctx.job.id)
    if len(CALLS) <= 2:
        raise ConnectionError(f"banque injoignable (essai {len(CALLS)}) pour «Zoë»")
    return "charged"


async def run_once(store: SqsJobStore, worker_id: str) -> None:
    """One run by a fresh worker, once the job is due (SQS hides a retry whole seconds)."""
    queue = JobQueue(store, backoff=Backoff(base=0.01, max=0.01))
    worker = JobWorker(queue, {"charge": charge}, worker_id=worker_id)
    try:
        deadline = time.monotonic() + 15
        while not await worker.run_once():
            assert time.monotonic() < deadline
            await asyncio.sleep(0.2)
    finally:
        await store.aclose()


async def test_show_tells_a_dead_job_retried_by_an_operator(
    cli_env: Env, store: SqsJobStore
) -> None:
    CALLS.clear()
    queue = JobQueue(store)
    try:
        job_id = (
            await queue.enqueue("charge", {"order": "Zoë-1"}, tenant="acme", max_attempts=2)
        ).job.id
    finally:
        await store.aclose()
    await run_once(store, "ip-10-0-3-17:4711")
    await run_once(store, "ip-10-0-3-17:4711")
    retried = invoke(cli_env, "jobs", "retry", job_id)
    assert retried.exit_code == 0, retried.output

    queued = invoke(cli_env, "jobs", "show", job_id)
    assert queued.exit_code == 0, queued.output
    history = queued.stdout.split("\nhistory\n", 1)[1].split("\ntraceback\n", 1)[0]
    lines = [line.rstrip() for line in history.strip().split("\n")]
    when = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  "
    ran = r" \(ran \d+\.\d s\)"
    patterns = [
        when + "attempt 1 failed on ip-10-0-3-17:4711" + ran + ", to be retried: "
        "ConnectionError: banque injoignable \\(essai 1\\) pour «Zoë»",
        when + "dead after attempt 2 on ip-10-0-3-17:4711" + ran + ": "
        "ConnectionError: banque injoignable \\(essai 2\\) pour «Zoë»",
        when + re.escape(f"retried by {operator()}: queued"),
    ]
    assert len(lines) == len(patterns), lines
    for line, pattern in zip(lines, patterns, strict=True):
        assert re.fullmatch(pattern, line), (line, pattern)

    await run_once(store, "ip-10-0-7-41:902")
    done = json.loads(invoke(cli_env, "jobs", "show", job_id, "--json").stdout)
    assert done["status"] == JobStatus.COMPLETED and done["history_count"] == 4
    entries = [HistoryEntry.model_validate(entry) for entry in done["history"]]
    assert [(e.kind, e.attempt, e.outcome, e.worker, e.by) for e in entries] == [
        ("attempt", 1, "retry", "ip-10-0-3-17:4711", None),
        ("attempt", 2, "dead", "ip-10-0-3-17:4711", None),
        ("retry", None, "queued", None, operator()),
        ("attempt", 1, "completed", "ip-10-0-7-41:902", None),
    ]
    assert set(done["history"][0]) == {
        "at",
        "kind",
        "attempt",
        "started_at",
        "worker",
        "outcome",
        "error",
        "traceback",
        "by",
    }
    assert datetime.fromisoformat(done["history"][3]["at"]) == datetime.fromisoformat(
        done["completed_at"]
    )
    shown = invoke(cli_env, "jobs", "show", job_id).stdout
    assert "(an earlier attempt's: it completed)" in shown
    assert "\ntraceback (of that earlier attempt)\n" in shown  # not the completed run's


def entry(at: datetime, n: int, **fields: Any) -> HistoryEntry:
    values: dict[str, Any] = {
        "at": at,
        "kind": "attempt",
        "attempt": n,
        "started_at": at - timedelta(seconds=2.5),
        "worker": "ip-10-0-3-17:4711",
        "outcome": "retry",
        "error": f"TimeoutError: relai muet ({n})",
    }
    return HistoryEntry(**{**values, **fields})


def test_a_long_history_says_how_many_entries_were_left_out() -> None:
    start = datetime(2026, 12, 6, 5, 19, 55, 243970, tzinfo=UTC)
    kept = [entry(start + timedelta(minutes=n), n) for n in range(4, 14)]
    text = shown(job_detail(job(JobStatus.DELAYED, history=kept, history_count=13)))
    assert "history  3 earlier entries not kept" in text
    assert "2026-12-06 05:23:55  attempt 4 failed on ip-10-0-3-17:4711 (ran 2.5 s), to be" in text
    assert text.count("to be retried: TimeoutError: relai muet") == 10


def test_stored_text_in_a_history_is_shown_as_it_is_never_as_markup() -> None:
    at = datetime(2026, 12, 6, 5, 19, 55, tzinfo=UTC)
    odd = entry(at, 1, worker="[red]w[/red]\x1b[2J", error="ValueError: [/x] \u202eevil")
    cancel = HistoryEntry(
        at=at,
        kind="cancel",
        attempt=None,
        started_at=None,
        worker=None,
        outcome="cancelled",
        by="cli:[bold]mallory[/bold]@host",
    )
    text = shown(job_detail(job(JobStatus.CANCELLED, history=[odd, cancel], history_count=2)))
    assert "on [red]w[/red]\\x1b[2J (ran 2.5 s)" in text
    assert "ValueError: [/x] \\u202eevil" in text
    assert "cancelled by cli:[bold]mallory[/bold]@host" in text


def test_a_job_without_history_shows_none() -> None:
    assert "history" not in shown(job_detail(job(JobStatus.QUEUED)))
