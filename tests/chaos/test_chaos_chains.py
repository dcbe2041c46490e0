"""Chaos for jobs that wait for others: chains and fan-ins through SIGKILLed workers.

Three ``sqsjobs worker`` processes serve 40 chains of four jobs (each ``after`` the one
before) and 10 fan-ins (eight parents, one child), while the test SIGKILLs a random worker
every so often and starts another. A kill can land between a parent's completion and its
children's release; the reconciler, run by the test every two seconds with a grace of
two leases (the workers' own is off), must then release them.

What must hold at the end: every record ``completed``, none left ``waiting``; the last job
of every chain returned 4 and every fan-in's child 9, so each child was handed its parents'
results; every job ran, and the duplicate executions are at most the number of kills.
"""

from __future__ import annotations

import os
import random
import secrets
import time
from collections import Counter
from pathlib import Path

import pytest

from sqsjobs import JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from tests.aws.emulator import unique_prefix

from .composed import kill_until_completed
from .test_chaos import LEASE, Fleet, SideEffects, worker_env

CHAINS = 40
CHAIN_LENGTH = 4
FAN_INS = 10
FAN_IN_PARENTS = 8
WORKERS = 3
HUNG = 900.0


@pytest.mark.slow
@pytest.mark.timeout(HUNG)
def test_chains_and_fan_ins_survive_sigkilled_workers(
    aws_endpoint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = int(os.environ.get("SQSJOBS_CHAOS_SEED") or secrets.randbits(32))
    rng = random.Random(seed)
    store = SqsJobStore.create(unique_prefix(), max_receive_count=10, endpoint_url=aws_endpoint)
    producer = SyncJobQueue(store, default_lease=LEASE, default_max_attempts=10)
    side_effects = SideEffects(tmp_path / "side-effects.log")
    fleet = Fleet(worker_env(store, aws_endpoint, side_effects.path), tmp_path)
    lasts: list[str] = []
    children: list[str] = []
    every: list[str] = []
    started = time.monotonic()
    try:
        fleet.workers = [fleet.start() for _ in range(WORKERS)]
        for chain in range(CHAINS):
            parent = None
            for step in range(CHAIN_LENGTH):
                after = [parent] if parent is not None else None
                parent = producer.enqueue(
                    "chaos.link", {"chain": chain, "step": step}, after=after
                ).job.id
                every.append(parent)
            assert parent is not None
            lasts.append(parent)
        for fan_in in range(FAN_INS):
            parents = [
                producer.enqueue("chaos.link", {"fan_in": fan_in, "n": n}).job.id
                for n in range(FAN_IN_PARENTS)
            ]
            child = producer.enqueue("chaos.link", {"fan_in": fan_in}, after=parents).job.id
            every += [*parents, child]
            children.append(child)
        final = kill_until_completed(store, aws_endpoint, fleet, side_effects, every, rng, seed)
        codes = fleet.drain()
    finally:
        fleet.kill_all()
        store.close()
    side_effects.read()
    runs = Counter(job_id for job_id, _, _ in side_effects.runs)
    duplicates = sum(runs.values()) - len(runs)
    with capsys.disabled():
        print(
            f"\nchains chaos seed {seed}: {len(every)} jobs ({CHAINS} chains of "
            f"{CHAIN_LENGTH}, {FAN_INS} fan-ins of {FAN_IN_PARENTS}), {WORKERS} workers, "
            f"{len(fleet.killed)} kills, {duplicates} duplicate executions, "
            f"{time.monotonic() - started:.1f}s wall time"
        )
    assert codes == [0] * WORKERS, f"seed {seed}: a worker did not drain cleanly: {codes}"
    assert Counter(job.status for job in final.values()) == {JobStatus.COMPLETED: len(every)}
    assert [final[job_id].result for job_id in lasts] == [CHAIN_LENGTH] * CHAINS, seed
    assert [final[job_id].result for job_id in children] == [FAN_IN_PARENTS + 1] * FAN_INS
    assert sorted(runs) == sorted(every), f"seed {seed}: a job never ran"
    assert duplicates <= len(fleet.killed), f"seed {seed}: {duplicates} duplicates"
