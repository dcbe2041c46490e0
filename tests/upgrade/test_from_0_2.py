"""A rolling upgrade from 0.2: both releases' producers, workers and reconcilers on one
table and its queues, while the deployment writes record format 2; then why it must say
when to write format 3.

The deployment is one 0.2 made (``conftest.deployment_0_2``); this release's stores
write format 2 (``record_format=2``) until every reader runs this release.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from sqsjobs import JobQueue, JobStatus, JobWorker, __version__
from sqsjobs.core.presence import PRESENCE_TTL, WorkerPresence
from sqsjobs.core.times import utc
from tests.aws.conftest import all_ids

from .conftest import Deployment
from .old_side import digest
from .previous import OldRelease
from .test_mixed_fleet import (
    HANDLERS,
    OldWorker,
    check_results,
    enqueue_new,
    enqueue_old,
    mix,
    reconcilers_repair_each_other,
    until_completed,
)

pytestmark = pytest.mark.slow


async def test_a_fleet_of_0_2_and_this_release_completes_every_job_once(
    old_0_2: OldRelease, deployment_0_2: Deployment, tmp_path: Path
) -> None:
    store = deployment_0_2.store(record_format=2)
    workers = [OldWorker(old_0_2, deployment_0_2, tmp_path, f"old-{n}") for n in range(2)]
    try:
        async with JobWorker(JobQueue(store), HANDLERS, queues=["default"], concurrency=4):
            jobs: dict[str, Any] = {}
            for turn in range(2):
                jobs |= await enqueue_new(store, mix(f"new{turn}"))
                jobs |= enqueue_old(old_0_2, deployment_0_2, mix(f"old{turn}"))
            await until_completed(store, jobs, timeout=90)
        for worker in workers:
            worker.stop()
        await check_results(store, jobs)
        # Each release lists every job once, whichever finished it.
        seen = old_0_2.run("list", deployment_0_2.config)
        assert {job_id: seen[job_id]["status"] for job_id in jobs} == dict.fromkeys(
            jobs, "completed"
        )
        assert {job_id: seen[job_id]["digest"] for job_id in jobs} == {
            job_id: digest(payload) for job_id, payload in jobs.items()
        }
        listed = await all_ids(JobQueue(store), 25)
        assert sorted(listed) == sorted(jobs)
        (stats,) = await store.stats(["default"])
        assert stats.counts[JobStatus.COMPLETED] == len(jobs)
        completed = await all_ids(JobQueue(store), 25, status=JobStatus.COMPLETED)
        assert sorted(completed) == sorted(jobs)  # format 2: ended in the open partitions
    finally:
        for worker in workers:
            worker.kill()
        await store.aclose()


async def test_each_releases_reconciler_resends_the_others_lost_messages(
    old_0_2: OldRelease, deployment_0_2: Deployment, tmp_path: Path
) -> None:
    await reconcilers_repair_each_other(old_0_2, deployment_0_2, 2, tmp_path)


async def test_record_format_3_is_not_for_a_fleet_with_0_2_readers(
    old_0_2: OldRelease, deployment_0_2: Deployment
) -> None:
    """Why the switch waits: 0.2 reads open partitions only, so it no longer lists a job
    format 3 ended, while this release lists both and counts both."""
    two, three = deployment_0_2.store(record_format=2), deployment_0_2.store(record_format=3)
    try:
        jobs: dict[str, Any] = {}
        for store, tag in ((two, "two"), (three, "three")):
            jobs |= await enqueue_new(store, mix(tag)[:1])
            async with JobWorker(JobQueue(store), HANDLERS, queues=["default"]):
                await until_completed(store, jobs)
        [before, after] = list(jobs)
        seen = old_0_2.run("list", deployment_0_2.config)
        assert before in seen and after not in seen
        assert await all_ids(JobQueue(three), 25) == [before, after]
        (stats,) = await three.stats(["default"])
        assert stats.counts[JobStatus.COMPLETED] == 2
    finally:
        await two.aclose()
        await three.aclose()


async def test_0_2_readers_pass_over_presence_records(
    old_0_2: OldRelease, deployment_0_2: Deployment
) -> None:
    """This release's workers keep presence records in the table and in ``by_queue``:
    0.2's list, stats and reconciler, which query their queues' partitions by name, see
    the jobs and nothing else (live records, and ended ones TTL has not deleted yet)."""
    store = deployment_0_2.store(record_format=2)
    try:
        jobs = await enqueue_new(store, mix("presence")[:2])
        async with JobWorker(JobQueue(store), HANDLERS, queues=["default"]):
            await until_completed(store, jobs)
        now = time.time()
        await store.put_presence(
            WorkerPresence(
                worker_id="worker-live",
                host="ip-10-0-3-17",
                pid=4242,
                version=__version__,
                queues=("default",),
                names=tuple(HANDLERS),
                concurrency=4,
                running=1,
                started_at=utc(now - 60),
                heartbeat_at=utc(now),
                expires_at=utc(now + PRESENCE_TTL),
            )
        )
        # The worker's own record ended at its stop; its item stays until TTL deletes it.
        assert [p.worker_id for p in await store.presences(time.time())] == ["worker-live"]
        seen = old_0_2.run("list", deployment_0_2.config)
        assert sorted(seen) == sorted(jobs)
        counted = old_0_2.run("stats", deployment_0_2.config)
        assert counted["default"]["completed"] == len(jobs)
        assert sum(counted["default"].values()) == len(jobs)
        assert old_0_2.run("reconcile", {**deployment_0_2.config, "grace": 0.0}) == {
            "resent": 0,
            "dead": 0,
        }
    finally:
        await store.aclose()
