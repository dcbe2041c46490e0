"""``sqsjobs worker --cron``: crons from the command line, run beside the registry's.

The worker is the console script in a subprocess against the emulator. Cron ticks come
each minute, so the test waits for the next minute to begin (up to a minute).
"""

from __future__ import annotations

import time
from datetime import UTC

import pytest

from sqsjobs import JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from tests.support.processes import ended

from .conftest import Env, invoke, wait_until
from .test_worker import start_worker, stop

SCHEDULED = "tests.cli.handlers:scheduled"


@pytest.mark.slow
def test_the_worker_enqueues_and_runs_the_ticks_of_cli_and_registry_crons(
    store: SqsJobStore, cli_env: Env
) -> None:
    producer = SyncJobQueue(store)
    started = time.time()
    worker = start_worker(
        cli_env,
        "--cron",
        "* * * * * reports.tick",
        "--cron-timezone",
        "Asia/Kolkata",
        registry=SCHEDULED,
    )
    try:
        wait_until(
            lambda: (
                {job.status for job in producer.list(limit=10).jobs} == {JobStatus.COMPLETED}
                and len(producer.list(limit=10).jobs) == 2
            ),
            timeout=80,
            what="the next minute's two cron jobs to run",
        )
        log = stop(worker)
    finally:
        ended(worker)
    assert worker.returncode == 0, log
    jobs = {job.name: job for job in producer.list(limit=10).jobs}
    tick = jobs["reports.tick"].created_at.replace(second=0, microsecond=0)  # enqueued at it
    assert tick.timestamp() > started
    stamp = tick.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert jobs["reports.tick"].idempotency_key == f"cron/reports.tick/{stamp}"
    assert jobs["reports.rollup"].idempotency_key == f"cron/reports.rollup/{stamp}"
    assert jobs["reports.rollup"].result == "ran with {'scope': 'tenants'}"
    assert (
        "Cron: reports.tick at '* * * * *' (Asia/Kolkata); reports.rollup at '* * * * *' (UTC)"
    ) in log


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cron", "0 3 * * *"], "Invalid value for '--cron': expected 'MIN HOUR DAY MONTH"),
        (["--cron", "0 3 * * * * reports.nightly"], "five cron fields, then the job name"),
        (["--cron", "0 25 * * * reports.nightly"], "Invalid cron schedule '0 25 * * *'"),
        (["--cron", "0 3 * * * reports/nightly"], "Invalid job name 'reports/nightly'"),
        (
            ["--cron", "0 3 * * * reports.nightly", "--cron-timezone", "Europe/Bärlin"],
            "Invalid value for '--cron-timezone': Invalid cron timezone 'Europe/Bärlin': "
            "must be an IANA name",
        ),
    ],
)
def test_a_bad_cron_exits_2_naming_the_expected_form(
    cli_env: Env, args: list[str], message: str
) -> None:
    result = invoke(cli_env, "worker", SCHEDULED, *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stdout == ""


def test_the_help_shows_the_cron_form(cli_env: Env) -> None:
    result = invoke(cli_env, "worker", "--help")
    assert "--cron 'SCHEDULE JOB'" in result.stdout and "--cron-timezone TZ" in result.stdout
    assert "'0 3 * * * reports.nightly'" in " ".join(result.stdout.split())
