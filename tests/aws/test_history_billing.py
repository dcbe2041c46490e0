"""What a job's history costs as DynamoDB bills it: the same writes, the record a little larger.

The history rides on writes the store makes anyway (an outcome, an operator's action),
so it adds no request; what it can add is write units, since each write bills the
record's larger image by the KB. Each story here runs through a real worker and the
emulator's meter, and is priced twice: as billed, and as the same writes would have
billed with the history's attributes (``h0`` … ``h9``, ``hist_n``) left out of every
image. They are not projected into the list index, so the index's writes are the same.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from sqsjobs import Backoff, JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing.billing import item_size, write_units
from sqsjobs.testing.meter import Read, Write, totals

from .emulator import METER

HISTORY_ATTRIBUTES = {f"h{n}" for n in range(10)} | {"hist_n"}
OPERATOR = "cli:ana@ops-bastion"


def without_history(records: list[Write | Read]) -> int:
    """The write units of ``records`` had their images no history attributes."""

    def stripped(item: Any) -> Any:
        if item is None:
            return None
        return {name: value for name, value in item.items() if name not in HISTORY_ATTRIBUTES}

    units = 0
    for record in records:
        if isinstance(record, Write):
            table = write_units(
                max(item_size(stripped(record.before)), item_size(stripped(record.after)))
            )
            units += table + sum(c.units for c in record.charges if c.index_name is not None)
    return units


async def run_until_idle(worker: JobWorker, runs: int) -> None:
    """``runs`` runs of the worker, waiting for each job to come due (SQS hides a retry
    for whole seconds)."""
    for _ in range(runs):
        deadline = time.monotonic() + 15
        while not await worker.run_once():
            assert time.monotonic() < deadline, "no job came due"
            await asyncio.sleep(0.2)


# The handler, compiled under an application's path: its traceback (kept on the record,
# compressed) then weighs the same wherever the suite is checked out.
HANDLER = """
async def charge(ctx, calls=[0]):
    calls[0] += 1
    if calls[0] <= TIMES:
        raise ConnectionError(f"paiement refusé par la banque (essai {calls[0]}) pour «Zoë»")
    return {"charged": "31.90"}
"""


def failing(times: int) -> Callable[[JobContext], Any]:
    """A handler that fails ``times`` times (a bank refusing, a traceback each time), then
    charges."""
    namespace: dict[str, Any] = {"TIMES": times}
    exec(compile(HANDLER, "/srv/shop/billing/charge.py", "exec"), namespace)
    handler: Callable[[JobContext], Any] = namespace["charge"]
    return handler


async def story(
    store: SqsJobStore, prefix: str, failures: int, max_attempts: int
) -> tuple[list[Write | Read], Any]:
    queue = JobQueue(store, backoff=Backoff(base=0.01, max=0.01))
    worker = JobWorker(queue, {"charge": failing(failures)}, queues=["default"])
    payload = {"order": "Zoë-1", "qty": 2, "total": "31.90"}
    with METER.record() as records:
        result = await queue.enqueue(
            "charge", payload, tenant="cafe-nord", max_attempts=max_attempts
        )
        died = failures >= max_attempts
        await run_until_idle(worker, max_attempts if died else failures + 1)
        if died:
            assert await store.retry(result.job.id, time.time(), by=OPERATOR)
            await run_until_idle(worker, 1)
    job = await store.get(result.job.id, time.time())
    return [record for record in records if record.table.startswith(prefix)], job


async def test_a_job_that_completes_at_once_still_bills_six_units_and_reads_one_entry(
    store: SqsJobStore, prefix: str
) -> None:
    records, job = await story(store, prefix, failures=0, max_attempts=3)
    writes = [record for record in records if isinstance(record, Write)]
    put, claim, complete = writes
    # The completion only counts its entry: the slot it would fill stays empty.
    assert complete.after is not None and complete.after["hist_n"] == {"N": "1"}
    assert not {f"h{n}" for n in range(10)} & set(complete.after)
    assert [put.units, claim.units, complete.units] == [2, 1, 3]
    assert totals(records)[0] == without_history(records) == 6
    [entry] = job.history
    assert (entry.kind, entry.attempt, entry.outcome, entry.at) == (
        "attempt",
        1,
        "completed",
        job.completed_at,
    )
    assert (entry.worker, entry.started_at, job.history_count) == (None, None, 1)


async def test_a_job_that_fails_once_then_completes_bills_one_unit_more(
    store: SqsJobStore, prefix: str
) -> None:
    records, job = await story(store, prefix, failures=1, max_attempts=3)
    assert [(e.attempt, e.outcome) for e in job.history] == [(1, "retry"), (2, "completed")]
    assert job.history[0].traceback and job.history[1].worker is not None
    writes = [record for record in records if isinstance(record, Write)]
    # put, claim, retry, claim, complete: the completion's full entry (beside the error
    # and its traceback) takes the record past 1 KB.
    assert [item_size(w.after) > 1024 for w in writes] == [False] * 4 + [True]
    assert (totals(records)[0], without_history(records)) == (9, 8)


async def test_a_job_that_died_was_retried_and_completed_bills_five_units_more(
    store: SqsJobStore, prefix: str
) -> None:
    records, job = await story(store, prefix, failures=2, max_attempts=2)
    assert [(e.kind, e.attempt, e.outcome, e.by) for e in job.history] == [
        ("attempt", 1, "retry", None),
        ("attempt", 2, "dead", None),
        ("retry", None, "queued", OPERATOR),
        ("attempt", 1, "completed", None),
    ]
    writes = [record for record in records if isinstance(record, Write)]
    # put, claim, retry, claim, dead, DLQ copy confirmed, revive, claim, complete
    assert len(writes) == 9
    # Two errors, their traceback and four entries take the record past 1 KB at its
    # death: from there each write bills 2 units for the table instead of 1.
    sizes = [item_size(w.after) for w in writes]
    assert sizes[3] <= 1024 < sizes[4]
    assert (totals(records)[0], without_history(records)) == (22, 17)
