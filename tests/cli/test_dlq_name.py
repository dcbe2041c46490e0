"""``dlq list --name`` and ``dlq redrive --name``: one handler's dead jobs, the rest left alone.

Run as an operator runs them, in a process against the emulator; the redrive's leftovers
must be visible again at once, so the peek right after it sees every one of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import boto3

from sqsjobs import JobContext, JobFatalError, JobQueue, JobStatus, JobWorker, SyncJobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import Env

CLI = [sys.executable, "-m", "sqsjobs.cli"]
NAMES = ["order.ship", "invoice.charge", "order.ship", "invoice.charge", "order.ship"]


def refuse(ctx: JobContext) -> None:
    raise JobFatalError(f"refused {ctx.job.payload['client']}")


async def dead_jobs(store: SqsJobStore) -> dict[str, str]:
    """Five jobs of two handlers, each dead-lettered by its handler: id -> name."""
    queue = JobQueue(store)
    made: dict[str, str] = {}
    try:
        for index, name in enumerate(NAMES):
            job = (await queue.enqueue(name, {"client": f"Zoë Ørsted {index}"})).job
            made[job.id] = name
        worker = JobWorker(queue, dict.fromkeys(set(NAMES), refuse))
        for _ in NAMES:
            assert await worker.run_once()
    finally:
        await store.aclose()
    return made


def sqsjobs(env: Env, *args: str) -> subprocess.CompletedProcess[str]:
    merged = {**os.environ, **{k: v for k, v in env.items() if v is not None}}
    merged.pop("SQSJOBS_STACK", None)
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, env=merged)


def listed(env: Env, *args: str) -> dict[str | None, str | None]:
    """``dlq list --json``: job (or message) id -> handler name; ``--peek`` among ``args``
    lists the DLQ's messages rather than the dead jobs' records."""
    result = sqsjobs(env, "dlq", "list", "--json", *args)
    assert result.returncode == 0, result.stderr
    letters: list[dict[str, Any]] = json.loads(result.stdout)
    return {
        letter["job_id"] or letter["message_id"]: letter["job"] and letter["job"]["name"]
        for letter in letters
    }


async def test_list_and_redrive_by_name_leave_the_other_handler_s_messages(
    cli_env: Env, store: SqsJobStore, aws_endpoint: str
) -> None:
    made = await dead_jobs(store)
    sqs = boto3.client("sqs", endpoint_url=aws_endpoint)
    try:
        sqs.send_message(QueueUrl=store.dead_letter_queue_urls["default"], MessageBody="hello")
    finally:
        sqs.close()
    ships = {job_id for job_id, name in made.items() if name == "order.ship"}
    charges = set(made) - ships

    assert set(listed(cli_env, "--name", "order.ship")) == ships
    assert (
        list(listed(cli_env, "--name", "order.ship", "--limit", "2").values()) == ["order.ship"] * 2
    )
    assert listed(cli_env) == made  # the records: every dead job, no foreign message
    everything = listed(cli_env, "--peek")
    assert len(everything) == 6 and None in everything.values()

    result = sqsjobs(cli_env, "dlq", "redrive", "--name", "order.ship")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "Redriven 3 job(s) to their queues; discarded 0 message(s) of finished or missing "
        "jobs; skipped 0 message(s), left in the dead-letter queue; passed over 3 message(s) "
        "not of order.ship, left there too\n"
    )
    # At once, with no wait for a visibility timeout: the others are all there.
    left = listed(cli_env, "--peek")
    assert set(left) - charges == {next(k for k, v in everything.items() if v is None)}
    assert charges <= set(left)
    assert listed(cli_env) == {job_id: made[job_id] for job_id in charges}  # the rest queued
    jobs = SyncJobQueue(store)
    for job_id in made:
        job = jobs.get(job_id)
        assert job is not None
        expected = JobStatus.QUEUED if job_id in ships else JobStatus.DEAD
        assert (job.status, job.attempts) == (expected, 0 if job_id in ships else 1)


async def test_the_store_redrives_one_handler_s_jobs(store: SqsJobStore) -> None:
    """The async face takes ``name`` too, and ``limit`` counts only that handler's."""
    made = await dead_jobs(store)
    try:
        letters = await store.dead_letters(name="invoice.charge")
        assert {letter.job_id for letter in letters} == {
            job_id for job_id, name in made.items() if name == "invoice.charge"
        }
        report = await store.redrive(name="invoice.charge", limit=1)
        assert (report.redriven, report.discarded, report.skipped) == (1, 0, 0)
        rest = await store.redrive(name="invoice.charge")
        assert (rest.redriven, rest.passed_over) == (1, 3)
        assert len(await store.dead_letters(name="invoice.charge")) == 0
        assert len(await store.dead_letters(name="order.ship")) == 3
    finally:
        await store.aclose()


def test_a_malformed_name_is_bad_usage(cli_env: Env) -> None:
    for command in (["list"], ["list", "--peek"], ["redrive"]):
        result = sqsjobs(cli_env, "dlq", *command, "--name", "Not A Name")
        assert result.returncode == 2, result.stderr
        assert "Invalid job name 'Not A Name': must match" in result.stderr
