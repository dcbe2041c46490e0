"""Tables at 80 columns and through a pipe: nothing an operator copies is cut.

Each command runs as a process whose stdout is a pipe, as in ``sqsjobs jobs list | less``
or a CI log, with long queue and handler names, long URLs and wide (CJK) characters. No
line may be wider than the width asked for, and every id, name and URL must be found
whole once a column's folded lines are joined again; below 120 columns the job list
shows each id as the prefix ``jobs show`` takes, on one line (``cli._columns``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from rich.cells import cell_len

from sqsjobs import JobContext, JobFatalError, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.cli._columns import SHORT_ID
from tests.aws.emulator import unique_prefix

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch.+Alarm:UserWarning")

CLI = [sys.executable, "-m", "sqsjobs.cli"]
LONG_QUEUE = "nightly-billing-reconciliation-for-every-tenant-eu-west"
LONG_NAME = "reports.monthly.build-the-quarterly-summary-for-each-tenant"
REFUSAL = "倉庫が拒否しました: the warehouse refused order Nº 7 (Zoë Ørsted, 東京都)"


def refuse(ctx: JobContext) -> None:
    raise JobFatalError(REFUSAL)


@pytest.fixture
def wide_store(aws_endpoint: str) -> Iterator[SqsJobStore]:
    made = SqsJobStore.create(
        unique_prefix(), queues=["default", LONG_QUEUE], endpoint_url=aws_endpoint, wait_time=1.0
    )
    try:
        yield made
    finally:
        made.close()


async def some_jobs(store: SqsJobStore) -> list[str]:
    """Queued jobs in the long queue, and dead ones (with a wide last error) in both."""
    queue = JobQueue(store)
    ids: list[str] = []
    try:
        for index in range(3):
            job = (await queue.enqueue(LONG_NAME, {"n": index}, queue=LONG_QUEUE)).job
            ids.append(job.id)
        for name in ("order.ship", "email.send"):
            ids.append((await queue.enqueue(name, {"to": "Zoë"})).job.id)
        worker = JobWorker(queue, {"order.ship": refuse, "email.send": refuse})
        assert await worker.run_once() and await worker.run_once()
    finally:
        await store.aclose()
    return ids


def piped(env: dict[str, str | None], *args: str) -> str:
    merged = {**os.environ, "NO_COLOR": "1", **env}
    merged = {key: value for key, value in merged.items() if value is not None}
    result = subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=120, env=merged, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def store_env(store: SqsJobStore, aws_endpoint: str, columns: str | None) -> dict[str, str | None]:
    return {
        "COLUMNS": columns,
        "SQSJOBS_STACK": None,
        "SQSJOBS_TABLE": store.table_name,
        "SQSJOBS_QUEUES": ",".join(f"{q}={url}" for q, url in store.queue_urls.items()),
        "AWS_ENDPOINT_URL": aws_endpoint,
    }


def columns(output: str) -> list[str]:
    """Each table column's text, its rows' lines joined: a folded cell is whole again."""
    joined: list[str] = []
    for line in output.splitlines():
        if not line.startswith("│"):
            continue
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        joined += [""] * (len(cells) - len(joined))
        for index, cell in enumerate(cells):
            joined[index] += cell
    return joined


def assert_fits(output: str, width: int) -> None:
    widest = max(output.splitlines(), key=cell_len)
    assert cell_len(widest) <= width, widest
    assert output.count("┓") == output.count("┏"), "a table lost its right edge"


@pytest.mark.parametrize("width", ["80", None, "60"])
async def test_jobs_list_keeps_every_id_and_name_whole(
    wide_store: SqsJobStore, aws_endpoint: str, width: str | None
) -> None:
    ids = await some_jobs(wide_store)
    output = piped(store_env(wide_store, aws_endpoint, width), "jobs", "list")
    assert_fits(output, int(width or 80))  # not a terminal, no COLUMNS: 80
    id_column, queue_column, name_column = columns(output)[:3]
    for job_id in ids:
        assert job_id[:SHORT_ID] in id_column and job_id not in id_column
    assert queue_column.count(LONG_QUEUE) == 3
    assert name_column.count(LONG_NAME) == 3
    assert "…" in output  # the last error is what gets shortened


async def test_dlq_list_and_stats_keep_ids_and_queue_names_whole(
    wide_store: SqsJobStore, aws_endpoint: str
) -> None:
    ids = await some_jobs(wide_store)
    env = store_env(wide_store, aws_endpoint, "80")
    dead = piped(env, "dlq", "list")  # the records: ids first, in two halves
    assert_fits(dead, 80)
    id_column, queue_column = columns(dead)[:2]
    assert ids[4] + ids[3] == id_column  # newest first
    assert queue_column == "defaultdefault"
    assert "…" in dead and "Left out" not in dead  # every column kept, the errors cut

    letters = piped(env, "dlq", "list", "--peek")  # the messages: queue first
    assert_fits(letters, 80)
    queue_column, id_column = columns(letters)[:2]
    assert ids[3] in id_column and ids[4] in id_column
    assert queue_column == "defaultdefault"

    stats = piped(env, "stats")
    assert_fits(stats, 80)
    # Two tables at 80 columns, records then messages, each with every header whole; then
    # the workers per queue.
    records, messages = stats.split("Messages per queue")
    messages, workers = messages.split("Workers per queue")
    assert columns(records)[0] == columns(messages)[0] == f"default{LONG_QUEUE}"
    assert columns(workers)[0] == f"default{LONG_QUEUE}"
    assert "…" not in stats
    for header in ("queued", "delayed", "running", "completed", "dead", "cancelled"):
        assert f" {header} " in records
    for header in ("visible", "in flight", "delayed", "DLQ"):
        assert f" {header} " in messages

    wide = piped({**env, "COLUMNS": "200"}, "jobs", "list")
    assert all(f"│ {job_id} │" in wide for job_id in ids)  # room enough: one line each
    assert "│ JobFatalError: 倉庫が拒否しました: " in wide


async def test_recent_failures_at_80_and_120_columns_keep_status_and_error_class_whole(
    wide_store: SqsJobStore, aws_endpoint: str
) -> None:
    ids = await some_jobs(wide_store)
    dead = ids[3:][::-1]  # newest first: the last to die on top
    for width in (80, 120):
        output = piped(
            store_env(wide_store, aws_endpoint, str(width)), "jobs", "list", "-s", "dead"
        )
        assert_fits(output, width)
        assert output.startswith("Jobs (dead) in every queue, newest first")
        id_column = columns(output)[0]
        shown = [job_id if width >= 120 else job_id[:SHORT_ID] for job_id in dead]
        assert id_column.index(shown[0]) < id_column.index(shown[1])
        rows = [line for line in output.splitlines() if line.startswith("│")]
        assert sum("│ dead " in line for line in rows) == 2  # whole, on one line each
        assert sum("│ JobFatalError" in line for line in rows) == 2, output


def test_infra_deploy_outputs_keep_every_url_whole(aws_endpoint: str) -> None:
    stack = f"{unique_prefix()}-billing-reconciliation-eu-west"
    env: dict[str, str | None] = {
        "COLUMNS": "80",
        "SQSJOBS_STACK": None,
        "AWS_ENDPOINT_URL": aws_endpoint,
    }
    output = piped(env, "infra", "deploy", "--stack", stack, "-p", "QueueName=invoices-eu-west")
    assert_fits(output, 80)
    client: Any = boto3.client("cloudformation", endpoint_url=aws_endpoint)
    try:
        [described] = client.describe_stacks(StackName=stack)["Stacks"]
    finally:
        client.close()
    names, values = columns(output[output.index("Outputs of stack") :])[:2]
    for item in described["Outputs"]:
        assert item["OutputKey"] in names
        assert item["OutputValue"] in values
