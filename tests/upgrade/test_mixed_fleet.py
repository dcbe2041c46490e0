"""A rolling upgrade from 0.1: both releases' producers, workers and reconcilers on one
table and its queues, with every job completing once, with its own payload.

The deployment is one 0.1 made (``conftest.deployment``) and this release's ``create``
upgraded; this release's stores write record format 1 (``record_format=1``) until
every reader runs 0.2, which is what the deployment says during the rollout.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import boto3
import pytest

from sqsjobs import JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing.payloads import random_document
from tests.aws.conftest import all_ids

from .conftest import Deployment
from .old_side import digest
from .previous import OldRelease

pytestmark = pytest.mark.slow


def mix(tag: str) -> list[dict[str, Any]]:
    """Requests (as ``old_side.produce`` takes them): what a real producer sends."""
    long_text = random_document(3_000, seed=len(tag))  # incompressible past 512 bytes
    order = {"lines": [{"sku": f"SKU-{n:05d}", "qty": n % 4 + 1} for n in range(40)]}
    return [
        {"name": "order.pack", "payload": {"order": f"{tag}-1", "note": "Grüße 🚚"}, "options": {}},
        {"name": "order.pack", "payload": {"order": f"{tag}-2", **long_text}, "options": {}},
        {"name": "order.pack", "payload": {"order": f"{tag}-3", **order}, "options": {}},
        {
            "name": "order.pack",
            "payload": {"order": f"{tag}-4"},
            "options": {"idempotency_key": f"order-{tag}-4", "tenant": "acme"},
        },
        {
            "name": "order.pack",
            "payload": {"order": f"{tag}-4"},
            "options": {"idempotency_key": f"order-{tag}-4", "tenant": "acme"},
        },
        {"name": "order.pack", "payload": {"order": f"{tag}-5"}, "options": {"delay": 1.37}},
        {"name": "order.flaky", "payload": {"order": f"{tag}-6"}, "options": {}},
    ]


async def enqueue_new(store: SqsJobStore, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """This release's producer; the payload of every job it wrote, by id."""
    queue = JobQueue(store)
    jobs: dict[str, Any] = {}
    for request in requests:
        result = await queue.enqueue(request["name"], request["payload"], **request["options"])
        jobs[result.job.id] = request["payload"]
    return jobs


def enqueue_old(old: OldRelease, deployment: Deployment, requests: list[dict[str, Any]]) -> dict:
    results = old.run("produce", {**deployment.config, "requests": requests})
    return {r["id"]: q["payload"] for r, q in zip(results, requests, strict=True)}


def pack(ctx: JobContext) -> str:
    return digest(ctx.job.payload)


def flaky(ctx: JobContext) -> str:
    if ctx.attempt == 1:
        raise RuntimeError("carrier timed out, try again")
    return digest(ctx.job.payload)


HANDLERS = {"order.pack": pack, "order.flaky": flaky}


async def until_completed(store: SqsJobStore, jobs: dict[str, Any], timeout: float = 60.0) -> None:
    queue = JobQueue(store)
    deadline = time.monotonic() + timeout
    while True:
        records = [await queue.get(job_id) for job_id in jobs]
        if all(r is not None and r.status is JobStatus.COMPLETED for r in records):
            return
        if any(r is not None and r.status is JobStatus.DEAD for r in records):
            dead = [(r.id, r.last_error) for r in records if r and r.status is JobStatus.DEAD]
            raise AssertionError(f"jobs died: {dead}")
        assert time.monotonic() < deadline, [r and (r.id, r.status) for r in records]
        await asyncio.sleep(0.1)


async def check_results(store: SqsJobStore, jobs: dict[str, Any]) -> None:
    """Each job completed once, with the result its own payload gives."""
    queue = JobQueue(store)
    for job_id, payload in jobs.items():
        record = await queue.get(job_id)
        assert record is not None and record.status is JobStatus.COMPLETED
        assert record.result == digest(payload), job_id
        assert record.payload == payload
        assert record.attempts == (2 if record.name == "order.flaky" else 1)


def lose_messages(sqs: Any, url: str) -> None:
    """Take every message off a queue (SQS allows one purge a minute)."""
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
        for message in messages:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


class OldWorker:
    """A worker process of the previous release, drained by SIGTERM as ECS stops one."""

    def __init__(self, old: OldRelease, deployment: Deployment, tmp: Path, name: str) -> None:
        config = {**deployment.config, "worker_id": name}
        self.process: subprocess.Popen[str] = old.start("work", config)
        assert self.process.stdout is not None
        assert json.loads(self.process.stdout.readline()) == {"started": True}

    def stop(self) -> str:
        self.process.send_signal(signal.SIGTERM)
        out, err = self.process.communicate(timeout=60)
        assert self.process.returncode == 0, err
        return out

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


async def test_an_old_worker_runs_what_this_releases_producers_write(
    old: OldRelease, deployment: Deployment, tmp_path: Path
) -> None:
    store = deployment.store(record_format=1)
    worker = OldWorker(old, deployment, tmp_path, "old-worker")
    try:
        jobs = await enqueue_new(store, mix("a"))
        await until_completed(store, jobs)
        worker.stop()
        await check_results(store, jobs)
        # The previous release's readers list them too (its by_status index).
        seen = old.run("list", deployment.config)
        assert {job_id: seen[job_id]["status"] for job_id in jobs} == dict.fromkeys(
            jobs, "completed"
        )
        assert {job_id: seen[job_id]["digest"] for job_id in jobs} == {
            job_id: digest(payload) for job_id, payload in jobs.items()
        }
    finally:
        worker.kill()
        await store.aclose()


async def test_record_format_2_is_not_for_a_fleet_with_old_workers(
    old: OldRelease, deployment: Deployment, tmp_path: Path
) -> None:
    """Why the deployment must say when every reader is upgraded: 0.1 cannot read format 2."""
    store = deployment.store(record_format=2)
    worker = OldWorker(old, deployment, tmp_path, "old-worker")
    try:
        long_payload = {"order": "b-1", **random_document(3_000, seed=11)}
        job = (await JobQueue(store).enqueue("order.pack", long_payload, max_attempts=1)).job
        deadline = time.monotonic() + 30
        while (record := await JobQueue(store).get(job.id)) is not None:
            if record.status is JobStatus.DEAD:
                break
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        assert record is not None and record.status is JobStatus.DEAD
        assert "payload" in (record.last_error or "")
    finally:
        worker.kill()
        await store.aclose()


async def test_this_releases_worker_runs_what_old_producers_write(
    old: OldRelease, deployment: Deployment
) -> None:
    store = deployment.store(record_format=1)
    jobs = enqueue_old(old, deployment, mix("c"))
    async with JobWorker(JobQueue(store), HANDLERS, queues=["default"], concurrency=4):
        await until_completed(store, jobs)
    await check_results(store, jobs)
    await store.aclose()


async def test_each_releases_reconciler_resends_the_others_lost_messages(
    old: OldRelease, deployment: Deployment, tmp_path: Path
) -> None:
    await reconcilers_repair_each_other(old, deployment, 1, tmp_path)


async def reconcilers_repair_each_other(
    old: OldRelease, deployment: Deployment, record_format: int, tmp_path: Path
) -> None:
    """Lost messages of both releases' jobs, re-sent by the old reconciler, then again by
    this release's (writing ``record_format``); every job then completes once."""
    store = deployment.store(record_format=record_format)
    sqs = boto3.client("sqs", endpoint_url=deployment.endpoint)
    url = deployment.config["queues"]["default"]
    try:
        new_jobs = await enqueue_new(store, mix("d")[:3])
        old_jobs = enqueue_old(old, deployment, mix("e")[:3])
        lose_messages(sqs, url)  # as if every SendMessage had failed after its PutItem
        await asyncio.sleep(0.7)
        # The old reconciler finds this release's records (their by_status keys) and the
        # new one finds the old release's (it reads by_status while the table has it).
        assert old.run("reconcile", {**deployment.config, "grace": 0.5}) == {
            "resent": 6,
            "dead": 0,
        }
        lose_messages(sqs, url)
        await asyncio.sleep(0.7)
        report = await store.reconcile(grace=0.5)
        assert (report.resent, report.dead) == (6, 0)
        worker = OldWorker(old, deployment, tmp_path, "old-worker")
        try:
            async with JobWorker(JobQueue(store), HANDLERS, queues=["default"]):
                await until_completed(store, {**new_jobs, **old_jobs})
        finally:
            worker.stop()
        await check_results(store, {**new_jobs, **old_jobs})
    finally:
        sqs.close()
        await store.aclose()


async def test_a_mixed_fleet_completes_every_job_once_and_lists_it_once(
    old: OldRelease, deployment: Deployment, tmp_path: Path
) -> None:
    store = deployment.store(record_format=1)
    workers = [OldWorker(old, deployment, tmp_path, f"old-{n}") for n in range(2)]
    try:
        async with JobWorker(JobQueue(store), HANDLERS, queues=["default"], concurrency=4):
            jobs: dict[str, Any] = {}
            for turn in range(3):
                jobs |= await enqueue_new(store, mix(f"new{turn}"))
                jobs |= enqueue_old(old, deployment, mix(f"old{turn}"))
            await until_completed(store, jobs, timeout=90)
        for worker in workers:
            worker.stop()
        await check_results(store, jobs)
        listed = await all_ids(JobQueue(store), 25)
        assert sorted(listed) == sorted(jobs)  # once each, through either index
        (stats,) = await store.stats(["default"])
        assert stats.counts[JobStatus.COMPLETED] == len(jobs)
        assert sum(stats.counts.values()) == len(jobs)
    finally:
        for worker in workers:
            worker.kill()
        await store.aclose()
