"""A job's history beside 0.2: a record this release keeps one in still reads there, and a
record 0.2 wrote or finished reads here as the history this release was told of.

The history is attributes 0.2 does not know (``h0`` … ``h9``, ``hist_n``): it ignores
them on every read and keeps them through its writes, which add no entries. So no record
format changes, and the deployment may keep writing format 2 while 0.2 runs beside it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from sqsjobs import JobQueue, JobStatus, JobWorker

from .conftest import Deployment
from .old_side import digest
from .previous import OldRelease
from .test_mixed_fleet import HANDLERS, OldWorker, enqueue_new, enqueue_old, until_completed

pytestmark = pytest.mark.slow


def flaky(order: str) -> list[dict[str, Any]]:
    """One job the handlers of both releases fail once, then complete."""
    return [{"name": "order.flaky", "payload": {"order": order, "note": "Grüße 🚚"}, "options": {}}]


async def test_histories_this_release_keeps_read_in_0_2_and_its_records_read_here(
    old_0_2: OldRelease, deployment_0_2: Deployment, tmp_path: Path
) -> None:
    store = deployment_0_2.store(record_format=2)
    try:
        ours = await enqueue_new(store, flaky("Ø-new"))
        async with JobWorker(JobQueue(store), HANDLERS, queues=["default"], worker_id="new-1"):
            await until_completed(store, ours)
        theirs = enqueue_old(old_0_2, deployment_0_2, flaky("Ø-old"))
        # Produced here, run there: 0.2's writes on a record this release wrote.
        mixed = await enqueue_new(store, flaky("Ø-mixed"))
        worker = OldWorker(old_0_2, deployment_0_2, tmp_path, "old-1")
        try:
            await until_completed(store, theirs | mixed)
        finally:
            worker.stop()

        [ours_id], [theirs_id], [mixed_id] = list(ours), list(theirs), list(mixed)
        mine = await store.get(ours_id, time.time())
        assert mine is not None
        assert [(e.attempt, e.outcome, e.worker) for e in mine.history] == [
            (1, "retry", "new-1"),
            (2, "completed", "new-1"),
        ]
        assert mine.history[0].error == "RuntimeError: carrier timed out, try again"
        for job_id in (theirs_id, mixed_id):  # 0.2 ran them: it told of nothing
            record = await store.get(job_id, time.time())
            assert record is not None and record.status is JobStatus.COMPLETED
            assert (record.history, record.history_count, record.attempts) == ([], 0, 2)

        seen = old_0_2.run("list", deployment_0_2.config)
        for job_id, payload in (ours | theirs | mixed).items():
            assert seen[job_id] == {"status": "completed", "digest": digest(payload)}
    finally:
        await store.aclose()
