"""``--json``: one JSON document on stdout, every field of each record, instants in ISO 8601."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime

from sqsjobs import EnqueueRequest, SyncJobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import Env, invoke
from .test_dlq import dead_job

JOB_FIELDS = {
    "id",
    "queue",
    "name",
    "payload",
    "status",
    "attempts",
    "max_attempts",
    "run_at",
    "created_at",
    "updated_at",
    "lease_until",
    "locked_by",
    "lease_token",
    "lease",
    "timeout",
    "priority",
    "idempotency_key",
    "tenant",
    "last_error",
    "last_traceback",  # the handler's frames of the failure last_error names, when it had any
    "history",  # the last 10 attempts and operator actions, oldest first
    "history_count",  # every entry ever written: how many the bounded history left out
    "labels",  # free-form tags given at enqueue (core.fields), {} when none
    "progress",  # as the run last reported it (ctx.progress); null until one does
    "debounce_key",  # enqueue(debounce_key=...): one unstarted job per key
    "after",  # the jobs it waits for (enqueue(after=...)), [] when none
    "children",  # the jobs that wait for it, [] when none
    "batch_id",  # its batch (queue.batch), null when none
    "batch_callback",  # on_complete / on_success for a batch's callback, else null
    "group",
    "trace_context",  # the enqueue span's W3C context; null when the producer had no tracing
    "completed_at",
    "result",
}


def test_jobs_list_json_is_one_list_of_every_field(cli_env: Env, store: SqsJobStore) -> None:
    producer = SyncJobQueue(store)
    payload = {"to": "zoë@example.com", "lines": [{"sku": "lamp", "qty": 2}]}
    first = producer.enqueue("email.send", payload, tenant="acme", idempotency_key="k-1").job
    second = producer.enqueue("image.resize", {"w": 640}, tenant="globex", delay=60).job

    result = invoke(cli_env, "jobs", "list", "--json")
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [job["id"] for job in listed] == [first.id, second.id]
    assert set(listed[0]) == JOB_FIELDS
    assert listed[0] == first.model_dump(mode="json")
    assert listed[0]["payload"] == payload
    assert datetime.fromisoformat(listed[1]["run_at"]) == second.run_at
    assert listed[1]["status"] == "delayed"


def test_jobs_show_json_is_one_object(cli_env: Env, store: SqsJobStore) -> None:
    job = SyncJobQueue(store).enqueue("email.send", {"n": 1.5}, tenant="acme").job
    result = invoke(cli_env, "jobs", "show", job.id, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == job.model_dump(mode="json")


def test_stats_json_has_every_status_and_depth(cli_env: Env, store: SqsJobStore) -> None:
    SyncJobQueue(store).enqueue("email.send", None)
    result = invoke(cli_env, "stats", "--json")
    assert result.exit_code == 0, result.output
    [queue] = json.loads(result.stdout)
    assert queue["queue"] == "default"
    assert queue["counts"] == {
        "waiting": 0,
        "queued": 1,
        "delayed": 0,
        "running": 0,
        "completed": 0,
        "dead": 0,
        "cancelled": 0,
    }
    assert set(queue) == {
        "queue",
        "counts",
        "messages",
        "in_flight",
        "delayed",
        "dead_letter_messages",
        "ended_since",
        "workers",
        "last_claim_at",
        "served_names",
        "waiting_names",
        "unserved_names",
        "oldest_queued_at",
        "attention",
    }
    assert queue["dead_letter_messages"] == 0
    assert (queue["workers"], queue["waiting_names"]) == (0, {"email.send": 1})
    assert queue["attention"] == [
        "1 job waits and no worker serves queue default: start one, or check the workers' logs"
    ]
    since = datetime.fromisoformat(queue["ended_since"])
    assert 3_590 < time.time() - since.timestamp() < 3_700  # the terminal counts' window


DEAD_LETTER_FIELDS = {"queue", "message_id", "job_id", "receive_count", "sent_at", "job"}


async def test_dlq_list_json_names_each_dead_job_whole_and_no_message(
    cli_env: Env, store: SqsJobStore
) -> None:
    """From the records: the keys a peek gives, with what only a message tells null."""
    job_id = await dead_job(store)
    result = invoke(cli_env, "dlq", "list", "--json")
    assert result.exit_code == 0, result.output
    [letter] = json.loads(result.stdout)
    assert set(letter) == DEAD_LETTER_FIELDS
    assert (letter["queue"], letter["job_id"]) == ("default", job_id)
    assert letter["message_id"] is letter["receive_count"] is letter["sent_at"] is None
    assert set(letter["job"]) == JOB_FIELDS
    assert (letter["job"]["status"], letter["job"]["attempts"]) == ("dead", 1)
    assert "JobFatalError: the warehouse refused" in letter["job"]["last_error"]
    stored = SyncJobQueue(store).get(job_id)
    assert stored is not None and letter["job"] == stored.model_dump(mode="json")


async def test_dlq_list_peek_json_names_each_message_and_its_whole_job(
    cli_env: Env, store: SqsJobStore
) -> None:
    job_id = await dead_job(store)
    result = invoke(cli_env, "dlq", "list", "--peek", "--json")
    assert result.exit_code == 0, result.output
    [letter] = json.loads(result.stdout)
    assert set(letter) == DEAD_LETTER_FIELDS
    assert letter["queue"] == "default"
    assert letter["job_id"] == job_id
    assert letter["message_id"]
    assert letter["receive_count"] >= 1
    assert datetime.fromisoformat(letter["sent_at"]).tzinfo is not None
    assert set(letter["job"]) == JOB_FIELDS
    assert (letter["job"]["status"], letter["job"]["attempts"]) == ("dead", 1)
    assert "JobFatalError: the warehouse refused" in letter["job"]["last_error"]


def test_json_of_a_real_process_is_the_only_thing_on_stdout(
    cli_env: Env, store: SqsJobStore
) -> None:
    job = SyncJobQueue(store).enqueue("report.build", {"mes": "ñandú"}, tenant="acme-7").job
    env = {**os.environ, **{k: v for k, v in cli_env.items() if v is not None}}
    env.pop("SQSJOBS_STACK", None)
    argv = [sys.executable, "-m", "sqsjobs.cli"]
    listed = subprocess.run(
        [*argv, "jobs", "list", "--all", "--json", "--tenant", "acme-7"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == [job.model_dump(mode="json")]
    shown = subprocess.run(
        [*argv, "jobs", "show", job.id[:8], "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["id"] == job.id


def test_refused_json_listings_leave_stdout_empty(cli_env: Env) -> None:
    for args in (["--queue", "nosuch"], ["--name", "Not A Name"], ["--all", "--tenant", "Ácme"]):
        result = invoke(cli_env, "jobs", "list", "--json", *args)
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert "Error: " in result.stderr


def test_a_reader_that_stops_early_ends_the_listing_quietly(
    cli_env: Env, store: SqsJobStore
) -> None:
    """``sqsjobs jobs list --json | head``: no traceback and no error line once ``head``
    has what it wanted, as ``ls | head`` ends."""
    queue = SyncJobQueue(store)
    note = "Grüße aus Köln " * 20
    for start in range(0, 300, 50):
        queue.enqueue_many(
            [
                EnqueueRequest("report.build", {"n": n, "note": note})
                for n in range(start, start + 50)
            ]
        )
    env = {**os.environ, **{k: v for k, v in cli_env.items() if v is not None}}
    env.pop("SQSJOBS_STACK", None)
    argv = [sys.executable, "-m", "sqsjobs.cli", "jobs", "list", "--all", "--json"]
    listing = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
    )
    assert listing.stdout is not None and listing.stderr is not None
    assert listing.stdout.readline() == "[\n"
    listing.stdout.close()  # the reader has what it wanted
    errors = listing.stderr.read()
    listing.stderr.close()
    assert listing.wait(timeout=60) == 1
    assert errors == ""
