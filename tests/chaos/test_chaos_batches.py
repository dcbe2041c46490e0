"""Chaos for batches: 500 jobs in batches of 50 with callbacks, and a chain after each
callback, through three ``sqsjobs worker`` processes that keep being SIGKILLed.

Each batch's ``on_complete`` callback runs once its 50 jobs have ended, and a job enqueued
``after`` that callback runs once the callback has completed. A kill can land between a
job's end and its count in the batch, or between a callback's release and its message:
the reconciler, run by the test every two seconds with a grace of two leases, finishes
both. At the end every record (jobs, callbacks, chained jobs) is ``completed`` and none
is ``waiting``; every batch counts 50 completed; every chained job returned 2 (it was
handed its callback's result, 1); handlers ran at most once more per kill than jobs exist.
"""

from __future__ import annotations

import os
import random
import secrets
import time
from collections import Counter
from pathlib import Path

import pytest

from sqsjobs import EnqueueRequest, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from tests.aws.emulator import unique_prefix

from .composed import kill_until_completed
from .test_chaos import LEASE, Fleet, SideEffects, worker_env

BATCHES = 10
BATCH_SIZE = 50
WORKERS = 3
HUNG = 900.0


@pytest.mark.slow
@pytest.mark.timeout(HUNG)
def test_batches_with_callbacks_and_chains_survive_sigkilled_workers(
    aws_endpoint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = int(os.environ.get("SQSJOBS_CHAOS_SEED") or secrets.randbits(32))
    rng = random.Random(seed)
    store = SqsJobStore.create(unique_prefix(), max_receive_count=10, endpoint_url=aws_endpoint)
    producer = SyncJobQueue(store, default_lease=LEASE, default_max_attempts=10)
    side_effects = SideEffects(tmp_path / "side-effects.log")
    fleet = Fleet(worker_env(store, aws_endpoint, side_effects.path), tmp_path)
    batches, chained, every = [], [], []
    started = time.monotonic()
    try:
        fleet.workers = [fleet.start() for _ in range(WORKERS)]
        for b in range(BATCHES):
            batch = producer.batch(
                [EnqueueRequest("chaos.step", {"batch": b, "n": n}) for n in range(BATCH_SIZE)],
                on_complete=EnqueueRequest("chaos.link", {"batch": b, "callback": True}),
            )
            [callback] = batch.callback_ids
            after = producer.enqueue("chaos.link", {"batch": b}, after=[callback]).job.id
            batches.append(batch)
            chained.append(after)
            every += [*batch.job_ids, callback, after]
        final = kill_until_completed(store, aws_endpoint, fleet, side_effects, every, rng, seed)
        codes = fleet.drain()
        statuses = [producer.batch_status(batch.id) for batch in batches]
    finally:
        fleet.kill_all()
        store.close()
    side_effects.read()
    runs = Counter(job_id for job_id, _, _ in side_effects.runs)
    duplicates = sum(runs.values()) - len(runs)
    with capsys.disabled():
        print(
            f"\nbatches chaos seed {seed}: {len(every)} jobs ({BATCHES} batches of "
            f"{BATCH_SIZE}, each with a callback and a job after it), {WORKERS} workers, "
            f"{len(fleet.killed)} kills, {duplicates} duplicate executions, "
            f"{time.monotonic() - started:.1f}s wall time"
        )
    assert codes == [0] * WORKERS, f"seed {seed}: a worker did not drain cleanly: {codes}"
    assert Counter(job.status for job in final.values()) == {JobStatus.COMPLETED: len(every)}
    assert [(s.completed, s.open) for s in statuses if s] == [(BATCH_SIZE, 0)] * BATCHES
    assert [final[job_id].result for job_id in chained] == [2] * BATCHES, seed
    assert sorted(runs) == sorted(every), f"seed {seed}: a job never ran"
    assert duplicates <= len(fleet.killed), f"seed {seed}: {duplicates} duplicates"
