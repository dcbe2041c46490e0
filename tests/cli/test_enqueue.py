"""``sqsjobs enqueue``: the job lands in the store; bad input exits 2, a refusal exits 1."""

from __future__ import annotations

import re

import pytest

from sqsjobs import JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import Env, invoke

JOB_ID = re.compile(r"job ([0-9a-f]{32}) ")


def enqueued_id(output: str) -> str:
    found = JOB_ID.search(output)
    assert found, output
    return found[1]


def test_enqueue_prints_the_id_of_a_job_that_is_in_the_store(
    cli_env: Env, store: SqsJobStore
) -> None:
    result = invoke(
        cli_env,
        "enqueue",
        "email.send",
        "--payload",
        '{"to": "ana@example.com", "n": [1, 2]}',
        "--delay",
        "30",
        "--tenant",
        "acme",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Enqueued job ")
    assert "(email.send on default, delayed)" in result.stdout
    job = SyncJobQueue(store).get(enqueued_id(result.stdout))
    assert job is not None
    assert (job.payload, job.status, job.tenant) == (
        {"to": "ana@example.com", "n": [1, 2]},
        JobStatus.DELAYED,
        "acme",
    )
    assert (job.run_at - job.created_at).total_seconds() == pytest.approx(30)


def test_a_repeated_idempotency_key_prints_the_same_job_as_a_duplicate(cli_env: Env) -> None:
    args = ["enqueue", "report.build", "--payload", '{"month": 5}', "--idempotency-key", "may"]
    first, again = invoke(cli_env, *args), invoke(cli_env, *args)
    assert (first.exit_code, again.exit_code) == (0, 0), again.output
    assert enqueued_id(first.stdout) == enqueued_id(again.stdout)
    assert again.stdout.startswith("Duplicate: job ")
    assert "'may'" in again.stdout and "nothing new was enqueued" in again.stdout


def test_the_same_key_with_another_payload_is_refused_with_exit_1(cli_env: Env) -> None:
    base = ["enqueue", "report.build", "--idempotency-key", "june", "--payload"]
    assert invoke(cli_env, *base, '{"month": 6}').exit_code == 0
    refused = invoke(cli_env, *base, '{"month": 7}')
    assert refused.exit_code == 1
    assert refused.stderr.count("\n") == 1
    assert refused.stderr.startswith("error: ") and "'june'" in refused.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--payload", "{to: 1}"], "Invalid value for '--payload': not valid JSON: Expecting"),
        (["--payload", "NaN"], "payload"),
        (["--queue", "nowhere"], "Queue 'nowhere' has no SQS queue in this store"),
        (["--tenant", "Not A Tenant"], "tenant"),
        (["--delay", "-1"], "Invalid value for '--delay'"),
    ],
)
def test_bad_input_exits_2_with_one_error_line(cli_env: Env, args: list[str], message: str) -> None:
    result = invoke(cli_env, "enqueue", "email.send", *args)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert "Traceback" not in result.output


def test_an_invalid_job_name_exits_2(cli_env: Env) -> None:
    result = invoke(cli_env, "enqueue", "9lives")
    assert result.exit_code == 2
    assert "Error: Invalid job name '9lives': must match" in result.stderr


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SQSJOBS_TABLE": None, "SQSJOBS_QUEUES": None}, "No job store configured: pass --stack"),
        (
            {"SQSJOBS_TABLE": "jobs", "SQSJOBS_QUEUES": "default"},
            "SQSJOBS_QUEUES must look like 'default=URL,high=URL', got 'default'",
        ),
    ],
)
def test_a_missing_or_malformed_configuration_is_bad_usage(env: Env, message: str) -> None:
    result = invoke({**env, "SQSJOBS_STACK": None}, "enqueue", "email.send")
    assert result.exit_code == 2
    assert f"Error: {message}" in result.stderr
