"""The loop both chaos tests of composed jobs run: until every job's record is completed,
SIGKILL a random worker every few seconds and run the reconciler every two."""

from __future__ import annotations

import random
import time
from collections import Counter

from sqsjobs import Job, JobStatus
from sqsjobs.aws import SqsJobStore

from .test_chaos import LEASE, Fleet, SideEffects, records

KILL_EVERY = 3.0  # seconds, give or take half
RECONCILE_EVERY = 2.0
STALL = 90.0


def kill_until_completed(
    store: SqsJobStore,
    endpoint: str,
    fleet: Fleet,
    side_effects: SideEffects,
    job_ids: list[str],
    rng: random.Random,
    seed: int,
) -> dict[str, Job]:
    """Every record once all are completed; fails if nothing runs for ``STALL`` seconds."""
    started = progressed = time.monotonic()
    next_kill, next_reconcile = started + KILL_EVERY, started + RECONCILE_EVERY
    ran = 0
    while True:
        side_effects.read()
        now = time.monotonic()
        if len(side_effects.jobs) > ran:
            ran, progressed = len(side_effects.jobs), now
        final = records(store, endpoint, job_ids)
        if all(job.status is JobStatus.COMPLETED for job in final.values()):
            return final
        assert now - progressed < STALL, (
            f"seed {seed}: nothing ran for {STALL:g}s: "
            f"{Counter(job.status for job in final.values())}"
        )
        fleet.check_alive()
        if now >= next_kill:
            fleet.kill_and_replace(rng.randrange(len(fleet.workers)))
            next_kill = now + KILL_EVERY * rng.uniform(0.5, 1.5)
        if now >= next_reconcile:
            store.sync.reconcile(grace=2 * LEASE)
            next_reconcile = now + RECONCILE_EVERY
        time.sleep(0.2)
