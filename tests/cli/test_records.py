"""``sqsjobs records formats``: an upgrade's last step waits on its exit status.

A deployment writing format 3 beside records a format-2 store wrote: the command exits 1
while one of them is open or ended and not yet expired, 0 once none is, and ``--json``
says the same for a script.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from sqsjobs import SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.flows.record_formats import READ_UNITS_PER_1000

from .conftest import Env, invoke


@pytest.fixture
def format_2(store: SqsJobStore, aws_endpoint: str) -> Iterator[SyncJobQueue]:
    """A producer of the release before, on the same table: it writes format 2."""
    earlier = SqsJobStore(
        table_name=store.table_name,
        queue_urls=store.queue_urls,
        endpoint_url=aws_endpoint,
        record_format=2,
    )
    try:
        yield SyncJobQueue(earlier)
    finally:
        earlier.close()


def expire(aws_endpoint: str, table: str, job_id: str) -> None:
    """Put a record past its retention, as time would (TTL's deletion is lazy anyway)."""
    client = boto3.client("dynamodb", endpoint_url=aws_endpoint)
    try:
        client.update_item(
            TableName=table,
            Key={"pk": {"S": f"job#{job_id}"}},
            UpdateExpression="SET expires_at = :past",
            ExpressionAttributeValues={":past": {"N": str(time.time() - 1)}},
        )
    finally:
        client.close()


def row(output: str, label: str) -> list[str]:
    found = re.search(rf"^│ {re.escape(label)} +│(.*)│$", output, re.M)
    assert found, output
    return [cell.strip() for cell in found[1].split("│")]


def test_exit_1_while_records_of_the_earlier_format_are_left_then_0(
    cli_env: Env, store: SqsJobStore, format_2: SyncJobQueue, aws_endpoint: str
) -> None:
    SyncJobQueue(store).enqueue("report.build", {"month": "2026-11"})
    job = format_2.enqueue("invoice.send", {"n": 1}, delay=600).job

    waiting = invoke(cli_env, "records", "formats")
    assert waiting.exit_code == 1, waiting.output
    assert row(waiting.stdout, "2") == ["1", "0", "-"]
    assert row(waiting.stdout, "3 (written)") == ["1", "0", "-"]
    assert "stores of this deployment write format 3" in waiting.stdout
    assert "Records of a format older than 3 are left (format 2: 1 open, 0 ended)" in (
        waiting.stdout
    )
    assert waiting.stderr == ""  # no error line: the answer is the exit status

    assert format_2.cancel(job.id)
    ended = invoke(cli_env, "records", "formats")
    assert ended.exit_code == 1
    last = row(ended.stdout, "2")[2]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", last)
    assert f"the last to expire on {last} UTC" in " ".join(ended.stdout.split())

    expire(aws_endpoint, store.table_name, job.id)
    clear = invoke(cli_env, "records", "formats")
    assert clear.exit_code == 0, clear.output
    assert "No record of a format older than 3 is left." in clear.stdout


def test_older_than_and_the_written_format_set_the_gate(
    cli_env: Env, format_2: SyncJobQueue
) -> None:
    format_2.enqueue("invoice.send", {"n": 1})
    assert invoke(cli_env, "records", "formats").exit_code == 1
    assert invoke(cli_env, "records", "formats", "--older-than", "2").exit_code == 0
    # A deployment still writing format 2 (its stores told so) has nothing older.
    still = invoke({**cli_env, "SQSJOBS_RECORD_FORMAT": "2"}, "records", "formats")
    assert still.exit_code == 0, still.output
    refused = invoke(cli_env, "records", "formats", "--older-than", "9")
    assert refused.exit_code == 2
    assert "--older-than" in refused.stderr


def test_json_is_the_counts_and_the_gate_s_answer(
    cli_env: Env, store: SqsJobStore, format_2: SyncJobQueue
) -> None:
    format_2.enqueue("invoice.send", {"n": 1})
    result = invoke(cli_env, "records", "formats", "--json")
    assert result.exit_code == 1
    document: dict[str, Any] = json.loads(result.stdout)
    assert document == {
        "table": store.table_name,
        "writes": 3,
        "older_than": 3,
        "items_scanned": 1,
        "formats": [{"format": 2, "open": 1, "ended": 0, "expired": 0, "last_expires_at": None}],
        "remaining": 1,
        "clear": False,
    }
    passed = json.loads(invoke(cli_env, "records", "formats", "--json", "--older-than", "2").stdout)
    assert (passed["remaining"], passed["clear"]) == (0, True)


def test_the_help_says_what_it_costs_and_needs() -> None:
    result = invoke({"COLUMNS": "200"}, "records", "formats", "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert f"about {READ_UNITS_PER_1000} read units per 1,000 records" in text
    assert "dynamodb:Scan" in text
