"""``sqsjobs enqueue --app MODULE:REGISTRY``: the producer has the workers' registry.

The handler's declared options land in the record, which is what ``jobs show`` prints and
what a worker applies; a name no handler has, or a payload its model refuses, is bad usage
(exit 2) and nothing is written. A value naming no registry is refused the same way, before
any request: the refusals run against a closed port, where a request would exit 1.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from sqsjobs import SyncJobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import Env, invoke
from .process import clean_env, run

APP = "tests.cli.declared_handlers:registry"
INVOICE = '{"number": "F-2026/001 — Müller", "total_cents": 123450}'


def shown(env: Env, job_id: str) -> dict[str, object]:
    result = invoke(env, "jobs", "show", job_id, "--json")
    assert result.exit_code == 0, result.output
    record: dict[str, object] = json.loads(result.stdout)
    return record


def test_the_handlers_declared_options_land_in_the_record(cli_env: Env) -> None:
    result = invoke(cli_env, "enqueue", "invoices.send", "--app", APP, "--payload", INVOICE)
    assert result.exit_code == 0, result.output
    job_id = result.stdout.split()[2]
    record = shown(cli_env, job_id)
    assert (record["max_attempts"], record["timeout"], record["lease"]) == (3, 120.0, 45.0)
    detail = invoke(cli_env, "jobs", "show", job_id)
    assert detail.exit_code == 0, detail.output
    assert "0/3" in detail.stdout and "120s" in detail.stdout and "45s" in detail.stdout


def test_an_option_given_wins_over_the_handlers(cli_env: Env) -> None:
    args = ["enqueue", "invoices.send", "--app", APP, "--payload", INVOICE]
    result = invoke(cli_env, *args, "--max-attempts", "7", "--timeout", "0", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert (record["max_attempts"], record["timeout"], record["lease"]) == (7, 0.0, 45.0)
    assert shown(cli_env, str(record["id"])) == record


def test_a_plain_mapping_is_taken_as_the_registry(cli_env: Env) -> None:
    app = "tests.cli.declared_handlers:mapping"
    result = invoke(cli_env, "enqueue", "invoices.void", "--app", app, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["max_attempts"] == 5  # declares nothing: the defaults


@pytest.mark.parametrize(
    ("name", "payload", "message"),
    [
        (
            "invoices.sned",
            INVOICE,
            "Job 'invoices.sned' has no handler in this producer's registry "
            "(handlers: invoices.send)",
        ),
        (
            "invoices.send",
            '{"number": "4111-1111-1111-1111", "total_cents": 0}',
            "Job 'invoices.send': Payload does not match Invoice: 1 error: total_cents",
        ),
    ],
    ids=["unknown-name", "payload-refused-by-the-model"],
)
def test_what_no_worker_could_run_is_refused_before_anything_is_written(
    cli_env: Env, store: SqsJobStore, name: str, payload: str, message: str
) -> None:
    result = invoke(cli_env, "enqueue", name, "--app", APP, "--payload", payload)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "4111" not in result.stderr  # where and how the payload failed, not what it held
    assert SyncJobQueue(store).list().jobs == []


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@pytest.mark.parametrize(
    ("app", "message"),
    [
        ("tests.cli.declared_handlers", "expected MODULE:REGISTRY, e.g. myapp.jobs:registry"),
        ("tests.cli.no_such_module:registry", "no module named 'tests.cli.no_such_module'"),
        (
            "tests.cli.declared_handlers:registri",
            "module 'tests.cli.declared_handlers' has no attribute 'registri'",
        ),
        (
            "tests.cli.handlers:not_a_registry",
            "tests.cli.handlers:not_a_registry is of type int, not a JobRegistry",
        ),
        ("tests.cli.handlers:empty", "The handler registry is empty"),
    ],
    ids=["no-attribute-part", "no-module", "no-attribute", "not-a-registry", "empty"],
)
def test_a_bad_app_is_bad_usage_that_names_what_is_wrong(
    tmp_path: Path, app: str, message: str
) -> None:
    endpoint = closed_port()
    env = clean_env(
        tmp_path,
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
        SQSJOBS_TABLE="jobs",
        SQSJOBS_QUEUES=f"default={endpoint}/000000000000/jobs",
        PYTHONPATH=str(Path(__file__).parents[2]),
    )
    result = run(env, "enqueue", "invoices.send", "--app", app, "--payload", INVOICE)
    assert result.returncode == 2, result.stderr
    assert "Invalid value for '--app'" in result.stderr and message in result.stderr
