"""Chaos: 2,000 jobs through four ``sqsjobs worker`` processes that keep being SIGKILLed.

Four real worker processes (``python -m sqsjobs.cli worker``, configured from
``SQSJOBS_*`` and ``AWS_ENDPOINT_URL`` as on ECS) serve one queue of the session's
emulator while the test enqueues in waves (moto's SQS slows on deep queues) and, at
progress points drawn from a seeded RNG, SIGKILLs a random worker and starts a new one.
Leases are two seconds, so a killed worker's job comes back quickly. The workers'
periodic reconciler is off: its grace period (15 minutes) is longer than the run, so it
could only add load to the emulator.

What must hold at the end: every job's record is ``completed`` (none lost, none stuck,
none dead), every job ran, and the duplicate executions (lines in the side-effect log
beyond one per job) are at most the number of kills. Each worker runs one job at a time
(``--concurrency 1``), so a SIGKILL interrupts at most one job that may already have had
its side effect; with concurrency ``c`` the honest bound would be ``kills * c``. Nothing
else may cause a duplicate here: two-second leases are heartbeaten every 0.67 s by jobs
that take 50 ms, and every claim is a conditional write; the test checks that every
unfinished run belongs to a killed process.

Set ``SQSJOBS_CHAOS_SEED`` to replay a run's kill points and victims (timing still varies).
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import boto3
import pytest

from sqsjobs import EnqueueRequest, Job, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.items import job_key, stored_from_item
from tests.aws.emulator import unique_prefix

from .handlers import LOG_ENV, SLEEP_ENV

ROOT = Path(__file__).parents[2]
REGISTRY = "tests.chaos.handlers:registry"
JOBS = 2_000
WORKERS = 4
CONCURRENCY = 1
KILLS = 12
LEASE = 2.0
WAVE = 40  # jobs per enqueue wave
# Enqueue the next wave when fewer jobs than this are waiting: moto's ReceiveMessage
# costs time in proportion to the queue's depth.
LOW_WATER = 40
# Only a hung run's end, not a bound on how long it takes: on a quiet 2-core machine the
# run takes about a minute and a half, with the suite running twice at once over five.
HUNG = 1_800.0
# A healthy run never goes this long without a job running: a killed worker's job is back
# within its two-second lease, and a replacement worker starts in about two seconds (on
# a loaded machine, a few times that).
STALL = 60.0


@dataclass
class Worker:
    """One ``sqsjobs worker`` process; its log goes to a file (a pipe would fill up)."""

    process: subprocess.Popen[bytes]
    log: IO[bytes]


@dataclass
class SideEffects:
    """The side-effect log, read incrementally: one ``(job_id, attempt, pid)`` per run."""

    path: Path
    runs: list[tuple[str, int, int]] = field(default_factory=list)
    jobs: set[str] = field(default_factory=set)
    _offset: int = 0

    def read(self) -> None:
        if not self.path.exists():
            return
        with self.path.open("rb") as file:
            file.seek(self._offset)
            data = file.read()
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        for line in complete.decode().splitlines():
            job_id, attempt, pid = line.split()
            self.runs.append((job_id, int(attempt), int(pid)))
            self.jobs.add(job_id)


class Fleet:
    """The worker processes: start, SIGKILL and restart, drain at the end."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self._env = env
        self._logs = logs
        self._started = 0
        self.workers: list[Worker] = []
        self.killed: list[int] = []

    def start(self) -> Worker:
        self._started += 1
        log = (self._logs / f"worker-{self._started}.log").open("wb")
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sqsjobs.cli",
                "worker",
                REGISTRY,
                "--concurrency",
                str(CONCURRENCY),
                "--grace",
                "5",
                "--reconcile-every",
                "0",
            ],
            cwd=ROOT,
            env=self._env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        return Worker(process, log)

    def kill_and_replace(self, victim: int) -> None:
        worker = self.workers.pop(victim)
        worker.process.send_signal(signal.SIGKILL)
        assert worker.process.wait(timeout=10) == -signal.SIGKILL
        worker.log.close()
        self.killed.append(worker.process.pid)
        self.workers.insert(victim, self.start())

    def check_alive(self) -> None:
        for worker in self.workers:
            code = worker.process.poll()
            assert code is None, f"worker {worker.process.pid} exited on its own ({code})"

    def drain(self) -> list[int]:
        """SIGTERM every worker once it has started, as ECS does; their exit codes. (One
        replaced a moment ago may still be importing: SIGTERM then kills it, which loses
        nothing, but is no drain.)"""
        for worker in self.workers:
            wait_started(worker)
            worker.process.send_signal(signal.SIGTERM)
        codes = [worker.process.wait(timeout=30) for worker in self.workers]
        for worker in self.workers:
            worker.log.close()
        return codes

    def kill_all(self) -> None:
        for worker in self.workers:
            if worker.process.poll() is None:
                worker.process.kill()
                worker.process.wait()
            worker.log.close()


def wait_started(worker: Worker, timeout: float = 30.0) -> None:
    """Until the worker's log says it started (its signal handlers are on by then)."""
    deadline = time.monotonic() + timeout
    while b" started on " not in Path(worker.log.name).read_bytes():
        assert worker.process.poll() is None, f"worker {worker.process.pid} exited at start"
        assert time.monotonic() < deadline, f"worker {worker.process.pid} never started"
        time.sleep(0.05)


def worker_env(store: SqsJobStore, endpoint: str, side_effects: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "SQSJOBS_TABLE": store.table_name,
        "SQSJOBS_QUEUES": ",".join(f"{q}={url}" for q, url in store.queue_urls.items()),
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "SQSJOBS_WAIT_TIME": "1",  # a stop waits out the last long poll
        LOG_ENV: str(side_effects),
        SLEEP_ENV: "0.05",
    }


def records(store: SqsJobStore, endpoint: str, job_ids: list[str]) -> dict[str, Job]:
    """Every job's record, by consistent batch reads (the list index would make moto scan
    the whole table once per status and shard)."""
    client = boto3.client("dynamodb", endpoint_url=endpoint)
    found: dict[str, Job] = {}
    try:
        for start in range(0, len(job_ids), 100):
            keys = [job_key(job_id) for job_id in job_ids[start : start + 100]]
            request: dict[str, Any] = {store.table_name: {"Keys": keys, "ConsistentRead": True}}
            while request:
                reply = client.batch_get_item(RequestItems=request)
                for item in reply["Responses"].get(store.table_name, []):
                    job = stored_from_item(item).job
                    found[job.id] = job
                request = reply.get("UnprocessedKeys") or {}
    finally:
        client.close()
    return found


@pytest.mark.slow
@pytest.mark.timeout(HUNG)
def test_sigkilled_workers_lose_no_job_and_rerun_at_most_one_per_kill(
    aws_endpoint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = int(os.environ.get("SQSJOBS_CHAOS_SEED") or secrets.randbits(32))
    print(f"\nchaos seed {seed} (replay with SQSJOBS_CHAOS_SEED={seed})")
    rng = random.Random(seed)
    kill_at = sorted(rng.sample(range(JOBS // 10, JOBS - JOBS // 10), KILLS))
    store = SqsJobStore.create(unique_prefix(), max_receive_count=10, endpoint_url=aws_endpoint)
    producer = SyncJobQueue(store, default_lease=LEASE, default_max_attempts=10)
    side_effects = SideEffects(tmp_path / "side-effects.log")
    fleet = Fleet(worker_env(store, aws_endpoint, side_effects.path), tmp_path)
    enqueued: list[str] = []
    started = progressed = time.monotonic()
    ran = 0
    try:
        fleet.workers = [fleet.start() for _ in range(WORKERS)]
        while len(side_effects.jobs) < JOBS:
            now = time.monotonic()
            if len(side_effects.jobs) > ran:
                ran, progressed = len(side_effects.jobs), now
            assert now - progressed < STALL, (
                f"seed {seed}: no job ran for {STALL:g}s; {len(enqueued) - ran} of "
                f"{len(enqueued)} enqueued jobs never ran (lost, or stuck)"
            )
            fleet.check_alive()
            if len(enqueued) < JOBS and len(enqueued) - len(side_effects.jobs) < LOW_WATER:
                wave = [EnqueueRequest("chaos.step", {"n": len(enqueued) + i}) for i in range(WAVE)]
                enqueued += [result.job.id for result in producer.enqueue_many(wave)]
            if len(fleet.killed) < KILLS and len(side_effects.jobs) >= kill_at[len(fleet.killed)]:
                fleet.kill_and_replace(rng.randrange(WORKERS))
            time.sleep(0.05)
            side_effects.read()
        # The last runs' completions land a moment after their side effects.
        final: dict[str, Job] = {}
        settled_by = time.monotonic() + STALL
        while time.monotonic() < settled_by:
            final = records(store, aws_endpoint, enqueued)
            if all(job.status is JobStatus.COMPLETED for job in final.values()):
                break
            time.sleep(0.5)
        codes = fleet.drain()
    finally:
        fleet.kill_all()
        store.close()
    wall = time.monotonic() - started
    side_effects.read()
    attempts: dict[str, list[int]] = defaultdict(list)
    for job_id, attempt, _ in side_effects.runs:
        attempts[job_id].append(attempt)
    # A run that was not its job's last is one whose outcome was never recorded.
    unfinished = Counter(
        pid for job_id, attempt, pid in side_effects.runs if attempt < max(attempts[job_id])
    )
    duplicates = len(side_effects.runs) - len(attempts)
    with capsys.disabled():  # the figures belong in every run's output, not only failures
        print(
            f"\nchaos seed {seed}: {JOBS} jobs, {WORKERS} workers x concurrency {CONCURRENCY}, "
            f"{len(fleet.killed)} kills ({len(unfinished)} of them after a side effect), "
            f"{duplicates} duplicate executions, {wall:.1f}s wall time"
        )
    assert codes == [0] * WORKERS, f"seed {seed}: a worker did not drain cleanly: {codes}"
    assert len(fleet.killed) == KILLS and len(enqueued) == JOBS
    assert sorted(final) == sorted(enqueued), f"seed {seed}: records missing"
    by_status = Counter(job.status for job in final.values())
    assert by_status == {JobStatus.COMPLETED: JOBS}, f"seed {seed}: {by_status}"
    assert sorted(attempts) == sorted(enqueued), f"seed {seed}: a job never ran"
    for job_id, seen in attempts.items():
        # Every run is a claim of its own, and the run that completed the job was its last.
        assert len(set(seen)) == len(seen), (seed, job_id, seen)
        assert final[job_id].attempts == max(seen), (seed, job_id, seen)
    # Only a SIGKILL leaves a run unfinished, and each takes at most CONCURRENCY runs with it.
    assert set(unfinished) <= set(fleet.killed), f"seed {seed}: {unfinished}"
    assert max(unfinished.values(), default=0) <= CONCURRENCY, f"seed {seed}: {unfinished}"
    assert duplicates == sum(unfinished.values()) <= len(fleet.killed), f"seed {seed}"
