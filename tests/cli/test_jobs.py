"""``sqsjobs jobs list|show|cancel``: aligned tables, every field, and clear refusals."""

from __future__ import annotations

import json
import re
import socket
from types import SimpleNamespace

import pytest

import sqsjobs.producer.enqueue
from sqsjobs import EnqueueRequest, JobContext, JobQueue, JobStatus, JobWorker, SyncJobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import PLAIN, Env, invoke

ROW = re.compile(r"^│ (?P<id>[0-9a-f]{32}) │ (?P<queue>\S+) +│ (?P<name>\S+) +│ (?P<status>\w+) +│")


def rows(output: str) -> list[tuple[str, str]]:
    return [(m["id"], m["status"]) for line in output.splitlines() if (m := ROW.match(line))]


def test_list_shows_the_jobs_oldest_first_filtered_by_status(
    cli_env: Env, store: SqsJobStore
) -> None:
    producer = SyncJobQueue(store)
    queued = [producer.enqueue("email.send", {"n": n}).job.id for n in range(3)]
    delayed = producer.enqueue("email.send", {"n": 3}, delay=60).job.id
    producer.cancel(queued[1])

    everything = invoke(cli_env, "jobs", "list")
    assert everything.exit_code == 0, everything.output
    assert rows(everything.stdout) == [
        (queued[0], "queued"),
        (queued[1], "cancelled"),
        (queued[2], "queued"),
        (delayed, "delayed"),
    ]
    header = next(line for line in everything.stdout.splitlines() if line.startswith("┃ id"))
    assert re.match(r"┃ id +┃ queue +┃ name +┃ status +┃ attempts +┃ run_at \(UTC\) +┃", header)

    waiting = invoke(cli_env, "jobs", "list", "--status", "queued", "-s", "delayed")
    assert rows(waiting.stdout) == [
        (queued[0], "queued"),
        (queued[2], "queued"),
        (delayed, "delayed"),
    ]

    first = invoke(cli_env, "jobs", "list", "--limit", "1", "--queue", "default")
    assert rows(first.stdout) == [(queued[0], "queued")]
    assert "raise --limit" in first.stdout


def test_list_refuses_an_unknown_status_with_exit_2(cli_env: Env) -> None:
    result = invoke(cli_env, "jobs", "list", "--status", "lost")
    assert result.exit_code == 2
    assert "Invalid value for '--status' / '-s'" in result.stderr


def test_show_prints_every_field_and_the_payload_as_json(cli_env: Env, store: SqsJobStore) -> None:
    payload = {"to": "ana@example.com", "lines": [{"sku": "lamp", "qty": 2}]}
    job = SyncJobQueue(store).enqueue("email.send", payload, idempotency_key="k1").job
    result = invoke(cli_env, "jobs", "show", job.id)
    assert result.exit_code == 0, result.output
    fields = dict(line.strip().split(None, 1) for line in result.stdout.splitlines()[:18])
    assert fields["id"] == job.id
    assert fields["status"] == "queued"
    assert fields["attempts"] == "0/5"
    assert fields["idempotency_key"] == "k1"
    assert fields["lease_until"] == "-"
    assert set(fields) >= {"queue", "name", "run_at", "created_at", "priority", "last_error"}
    after = result.stdout.split("\npayload\n", 1)[1]
    assert json.loads(after) == payload
    assert '\n  "lines": [\n' in after  # indented, one field a line


async def test_show_of_a_completed_job_includes_its_result(
    cli_env: Env, store: SqsJobStore
) -> None:
    queue = JobQueue(store)
    try:
        job = (await queue.enqueue("email.send")).job
        assert await JobWorker(queue, {"email.send": lambda ctx: {"sent": True}}).run_once()
    finally:
        await store.aclose()
    result = invoke(cli_env, "jobs", "show", job.id)
    assert result.exit_code == 0, result.output
    assert re.search(r"^status +completed", result.stdout, re.MULTILINE)
    assert json.loads(result.stdout.split("\nresult\n", 1)[1]) == {"sent": True}


async def test_show_gives_the_progress_its_run_last_reported(
    cli_env: Env, store: SqsJobStore
) -> None:
    queue = JobQueue(store)

    async def export(ctx: JobContext) -> None:
        await ctx.progress({"rows": 1200, "of": 5000, "table": "bestellungen"})
        raise ConnectionError("warehouse closed the connection")

    try:
        job = (await queue.enqueue("ledger.export", max_attempts=2)).job
        assert await JobWorker(queue, {"ledger.export": export}).run_once()
    finally:
        await store.aclose()
    result = invoke(cli_env, "jobs", "show", job.id)
    assert result.exit_code == 0, result.output
    expected = '{"rows": 1200, "of": 5000, "table": "bestellungen"}'
    assert re.search(rf"^progress +{re.escape(expected)}$", result.stdout, re.MULTILINE)


def test_cancel_cancels_once_then_refuses_with_exit_1(cli_env: Env, store: SqsJobStore) -> None:
    job = SyncJobQueue(store).enqueue("email.send", None, delay=300).job
    first = invoke(cli_env, "jobs", "cancel", job.id)
    assert (first.exit_code, first.stdout) == (0, f"Cancelled job {job.id}\n")
    current = SyncJobQueue(store).get(job.id)
    assert current is not None and current.status is JobStatus.CANCELLED
    again = invoke(cli_env, "jobs", "cancel", job.id)
    assert again.exit_code == 1
    assert again.stderr == (
        f"error: Job {job.id} is already cancelled; "
        "only delayed, queued, running, waiting jobs can be cancelled\n"
    )


def test_an_unknown_id_is_a_one_line_failure(cli_env: Env) -> None:
    for command in ("show", "cancel"):
        result = invoke(cli_env, "jobs", command, "f" * 32)
        assert result.exit_code == 1
        assert result.stderr.startswith(f"error: No job '{'f' * 32}' (unknown")
        assert result.stderr.count("\n") == 1


def test_endpoint_url_option_overrides_the_environment(cli_env: Env, aws_endpoint: str) -> None:
    unreachable = {**cli_env, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}
    result = invoke(unreachable, "jobs", "list", "--endpoint-url", aws_endpoint)
    assert result.exit_code == 0, result.output
    assert "Jobs in every queue" in result.stdout


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_an_unreachable_endpoint_s_credentials_stay_out_of_the_error_line() -> None:
    port = closed_port()
    endpoint = f"http://AKIAEXAMPLE:s3cr%2Ft-Wört@127.0.0.1:{port}"
    env = {
        **PLAIN,
        "SQSJOBS_STACK": None,
        "SQSJOBS_TABLE": "jobs-table",
        "SQSJOBS_QUEUES": f"default={endpoint}/000000000000/jobs?X-Amz-Security-Token=FQoGZX",
        "AWS_ENDPOINT_URL": None,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "eu-west-1",
    }
    result = invoke(env, "jobs", "show", "0123456789abcdef", "--endpoint-url", endpoint)
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        f"error: Could not connect to http://***@127.0.0.1:{port}/: check --endpoint-url "
        "(or AWS_ENDPOINT_URL) and --region, and that the endpoint is up\n"
    )
    for secret in ("AKIAEXAMPLE", "s3cr", "Wört", "FQoGZX"):
        assert secret not in result.output


def test_list_filters_by_name_and_tenant(cli_env: Env, store: SqsJobStore) -> None:
    producer = SyncJobQueue(store)
    acme_mail = producer.enqueue("email.send", {"to": "zoë@acme.example"}, tenant="acme").job
    producer.enqueue("email.send", {"to": "li@globex.example"}, tenant="globex")
    acme_image = producer.enqueue("image.resize", {"w": 640}, tenant="acme").job

    named = invoke(cli_env, "jobs", "list", "--name", "email.send", "--tenant", "acme")
    assert named.exit_code == 0, named.output
    assert rows(named.stdout) == [(acme_mail.id, "queued")]
    assert "Jobs named email.send of tenant acme in every queue" in named.stdout
    tenant = invoke(cli_env, "jobs", "list", "--tenant", "acme")
    assert rows(tenant.stdout) == [(acme_mail.id, "queued"), (acme_image.id, "queued")]


def test_list_all_pages_through_every_job(cli_env: Env, store: SqsJobStore) -> None:
    producer = SyncJobQueue(store)
    ids = [producer.enqueue("email.send", {"n": n}, tenant="acme").job.id for n in range(5)]

    first = invoke(cli_env, "jobs", "list", "--limit", "2")
    assert [job_id for job_id, _ in rows(first.stdout)] == ids[:2]
    assert "raise --limit (up to 1000) or pass --all" in first.stdout
    every = invoke(cli_env, "jobs", "list", "--all", "--limit", "2")
    assert every.exit_code == 0, every.output
    assert [job_id for job_id, _ in rows(every.stdout)] == ids
    assert every.stdout.rstrip().endswith("5 job(s)")
    assert every.stdout.count("┃ id ") == 3  # a table per page of 2, printed as it came
    listed = invoke(cli_env, "jobs", "list", "--all", "--limit", "2", "--json")
    assert [job["id"] for job in json.loads(listed.stdout)] == ids
    nothing = invoke(cli_env, "jobs", "list", "--all", "--json", "--tenant", "globex")
    assert json.loads(nothing.stdout) == []


def test_list_of_an_unknown_queue_is_bad_usage_naming_the_queues(cli_env: Env) -> None:
    result = invoke(cli_env, "jobs", "list", "--queue", "nosuch")
    assert result.exit_code == 2
    assert "Error: Queue 'nosuch' is not one of this store's queues (default)" in result.stderr


def test_show_cancel_and_retry_take_a_unique_prefix(cli_env: Env, store: SqsJobStore) -> None:
    producer = SyncJobQueue(store)
    job = producer.enqueue("email.send", {"to": "zoë@example.com"}, delay=300).job
    producer.enqueue("email.send", {"to": "li@example.com"}, delay=300)

    shown = invoke(cli_env, "jobs", "show", job.id[:8])
    assert shown.exit_code == 0, shown.output
    assert re.search(rf"^id +{job.id}$", shown.stdout, re.MULTILINE)
    cancelled = invoke(cli_env, "jobs", "cancel", job.id[:6])
    assert (cancelled.exit_code, cancelled.stdout) == (0, f"Cancelled job {job.id}\n")
    retried = invoke(cli_env, "jobs", "retry", job.id[:10])
    assert retried.exit_code == 1
    assert retried.stderr == f"error: Job {job.id} is cancelled; only dead jobs can be retried\n"


def test_a_short_or_unmatched_prefix_is_refused(cli_env: Env, store: SqsJobStore) -> None:
    job = SyncJobQueue(store).enqueue("email.send", None).job
    short = invoke(cli_env, "jobs", "show", job.id[:5])
    assert short.exit_code == 2
    assert "is too short: give the full id or at least 6 of its characters" in short.stderr
    unmatched = "".join("0" if c != "0" else "1" for c in job.id[:7])
    for command in ("show", "cancel", "retry"):
        result = invoke(cli_env, "jobs", command, unmatched)
        assert result.exit_code == 1
        assert result.stderr.startswith(f"error: No job '{unmatched}' (unknown")


def test_an_ambiguous_prefix_exits_2_listing_the_matches(
    cli_env: Env, store: SqsJobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = iter(["5eed0c" + "a" * 26, "5eed0c" + "b" * 26, "5eed0d" + "c" * 26])
    # Two random ids share 6 characters once in 16 million pairs: the ids are chosen here.
    chosen = SimpleNamespace(uuid4=lambda: SimpleNamespace(hex=next(made)))
    monkeypatch.setattr(sqsjobs.producer.enqueue, "uuid", chosen)
    producer = SyncJobQueue(store)
    first, second, third = (producer.enqueue("email.send", {"n": n}).job for n in range(3))

    result = invoke(cli_env, "jobs", "cancel", "5eed0c")
    assert result.exit_code == 2
    assert f"Job id prefix '5eed0c' matches 2 jobs: {first.id} (default email.send queued)" in (
        result.stderr
    )
    assert second.id in result.stderr and third.id not in result.stderr
    assert producer.get(first.id).status is JobStatus.QUEUED  # type: ignore[union-attr]
    assert invoke(cli_env, "jobs", "cancel", "5eed0d").exit_code == 0


def test_list_all_reads_pages_of_1000_unless_told(cli_env: Env, store: SqsJobStore) -> None:
    requests = [EnqueueRequest("email.send", {"n": n}, tenant="acme") for n in range(60)]
    ids = [result.job.id for result in SyncJobQueue(store).enqueue_many(requests)]
    one = invoke(cli_env, "jobs", "list")
    assert len(rows(one.stdout)) == 50
    every = invoke(cli_env, "jobs", "list", "--all")
    assert every.exit_code == 0, every.output
    assert sorted(job_id for job_id, _ in rows(every.stdout)) == sorted(ids)
    assert every.stdout.count("┃ id ") == 1


def test_show_names_the_jobs_it_waits_for(cli_env: Env, store: SqsJobStore) -> None:
    producer = SyncJobQueue(store)
    parent = producer.enqueue("ledger.extract", delay=600).job
    child = producer.enqueue("ledger.load", after=[parent.id]).job
    result = invoke(cli_env, "jobs", "show", child.id)
    assert result.exit_code == 0, result.output
    assert re.search(r"^status +waiting\s*$", result.stdout, re.MULTILINE)
    assert re.search(rf"^after +{parent.id}\s*$", result.stdout, re.MULTILINE)
    shown = invoke(cli_env, "jobs", "show", parent.id)
    assert re.search(rf"^children +{child.id}\s*$", shown.stdout, re.MULTILINE)


def test_show_names_a_job_s_batch_and_a_callback_s_role(cli_env: Env, store: SqsJobStore) -> None:
    producer = SyncJobQueue(store)
    batch = producer.batch(
        [EnqueueRequest("invoice.render", {"n": 1})],
        on_complete=EnqueueRequest("invoice.summary"),
    )
    member = invoke(cli_env, "jobs", "show", batch.job_ids[0])
    assert re.search(rf"^batch +{batch.id}\s*$", member.stdout, re.MULTILINE), member.stdout
    callback = invoke(cli_env, "jobs", "show", batch.callback_ids[0])
    expected = rf"^batch +{batch.id} \(on_complete callback\)\s*$"
    assert re.search(expected, callback.stdout, re.MULTILINE), callback.stdout
