"""The command line prints stored text as it is: never as markup, never as terminal codes.

A job's last error, idempotency key and payload come from whoever enqueued or ran it. Read
as rich markup, ``[/x]`` would crash the command and ``[link=...]x[/link]`` would show
only ``x`` with a hidden hyperlink; raw escape sequences would reach the terminal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from sqsjobs import JobFatalError, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.items import job_key

from .conftest import Env, invoke

CLOSE = "[/x]"
LINK = "[link=https://example.invalid]click[/link]"
LOUD = "[bold red]Zoë[/bold red]"
EMOJI = ":thumbs_up:"
MARKUP = f"{CLOSE} {LINK} {LOUD} {EMOJI}"
TERMINAL = "\x1b]8;;https://example.invalid\x1b\\click\x1b]8;;\x1b\\ \x1b[2J \x9b31m"
TERMINAL_SHOWN = "\\x1b]8;;https://example.invalid\\x1b\\click\\x1b]8;;\\x1b\\ \\x1b[2J \\x9b31m"
BIDI_CONTROLS = [
    "\u061c",
    "\u200e",
    "\u200f",
    *map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]),
]


@pytest.fixture
def dynamodb(aws_endpoint: str) -> Iterator[Any]:
    client = boto3.client("dynamodb", endpoint_url=aws_endpoint)
    yield client
    client.close()


async def dead_job(store: SqsJobStore, key: str, payload: Any) -> str:
    """A job dead-lettered with ``MARKUP`` in its last error, under idempotency ``key``."""

    def refuse(ctx: Any) -> None:
        raise JobFatalError(MARKUP)

    queue = JobQueue(store)
    try:
        job = (await queue.enqueue("order.ship", payload, idempotency_key=key)).job
        assert await JobWorker(queue, {"order.ship": refuse}).run_once()
    finally:
        await store.aclose()
    return job.id


def detail(output: str) -> dict[str, str]:
    """``jobs show``'s field lines by name (values never fold at this width)."""
    head = output.split("\npayload\n", 1)[0].split("\ntraceback\n", 1)[0]
    head = head.split("\nhistory", 1)[0]  # the timeline follows the fields
    return dict(line.strip().split(None, 1) for line in head.splitlines())


async def test_jobs_show_and_list_and_dlq_list_print_markup_literally(
    cli_env: Env, store: SqsJobStore
) -> None:
    payload = {"note": MARKUP, "holder": "Zoë Åsa"}
    closing = await dead_job(store, CLOSE, payload)
    linked = await dead_job(store, LINK, [LOUD, EMOJI])

    shown = invoke(cli_env, "jobs", "show", closing)
    assert shown.exit_code == 0, shown.output
    fields = detail(shown.stdout)
    assert fields["idempotency_key"] == CLOSE
    assert fields["last_error"] == f"JobFatalError: {MARKUP}"
    trace = shown.stdout.split("\ntraceback\n", 1)[1].split("\npayload\n", 1)[0]
    assert trace.splitlines()[-1] == f"sqsjobs.core.errors.JobFatalError: {MARKUP}"  # literally
    assert json.loads(shown.stdout.split("\npayload\n", 1)[1]) == payload

    other = invoke(cli_env, "jobs", "show", linked)
    assert other.exit_code == 0, other.output
    assert detail(other.stdout)["idempotency_key"] == LINK
    assert json.loads(other.stdout.split("\npayload\n", 1)[1]) == [LOUD, EMOJI]

    wide = {**cli_env, "COLUMNS": "400"}  # the last_error column in full
    for args in (("jobs", "list"), ("dlq", "list"), ("dlq", "list", "--peek")):
        listed = invoke(wide, *args)
        assert listed.exit_code == 0, (args, listed.output)
        rows = [line for line in listed.stdout.splitlines() if closing in line or linked in line]
        assert len(rows) == 2, listed.stdout
        assert all(f"JobFatalError: {MARKUP}" in row for row in rows), rows


async def test_terminal_control_sequences_in_a_stored_error_are_shown_escaped(
    cli_env: Env, store: SqsJobStore, dynamodb: Any
) -> None:
    """A record written by another writer (or an older version) may hold raw controls."""
    job_id = await dead_job(store, "order-7", {"note": f"payload {TERMINAL}"})
    dynamodb.update_item(
        TableName=store.table_name,
        Key=job_key(job_id),
        UpdateExpression="SET last_error = :error",
        ExpressionAttributeValues={":error": {"S": f"RuntimeError: {TERMINAL}\nforged line"}},
    )

    shown = invoke(cli_env, "jobs", "show", job_id)
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.stdout and "\x9b" not in shown.stdout
    assert detail(shown.stdout)["last_error"] == f"RuntimeError: {TERMINAL_SHOWN}\\nforged line"
    after = shown.stdout.split("\npayload\n", 1)[1]
    assert json.loads(after) == {"note": f"payload {TERMINAL}"}

    listed = invoke({**cli_env, "COLUMNS": "400"}, "jobs", "list")
    assert listed.exit_code == 0, listed.output
    assert "\x1b" not in listed.stdout and "\x9b" not in listed.stdout
    assert f"RuntimeError: {TERMINAL_SHOWN}\\nforged line" in listed.stdout


BIDI = "invoice_\u202efdp.exe \u2067ltr\u2069 \u200f"  # shows as "invoice_exe.pdf ..."
BIDI_SHOWN = "invoice_\\u202efdp.exe \\u2067ltr\\u2069 \\u200f"


async def test_bidi_controls_in_stored_text_are_shown_escaped_and_json_stays_exact(
    cli_env: Env, store: SqsJobStore, dynamodb: Any
) -> None:
    """A record written by another writer (or before bidi controls were escaped at the
    source) may hold them raw: tables, ``jobs show`` and ``--json`` never pass one on."""
    payload = {"file": BIDI, "owner": "Zoë"}
    job_id = await dead_job(store, "order-8", payload)
    dynamodb.update_item(
        TableName=store.table_name,
        Key=job_key(job_id),
        UpdateExpression="SET last_error = :error",
        ExpressionAttributeValues={":error": {"S": f"RuntimeError: {BIDI}"}},
    )
    wide = {**cli_env, "COLUMNS": "400"}

    shown = invoke(wide, "jobs", "show", job_id)
    assert shown.exit_code == 0, shown.output
    assert not set(BIDI_CONTROLS) & set(shown.stdout)
    assert detail(shown.stdout)["last_error"] == f"RuntimeError: {BIDI_SHOWN}"
    assert json.loads(shown.stdout.split("\npayload\n", 1)[1]) == payload

    listed = invoke(wide, "jobs", "list")
    assert listed.exit_code == 0, listed.output
    assert not set(BIDI_CONTROLS) & set(listed.stdout)
    assert f"RuntimeError: {BIDI_SHOWN}" in listed.stdout

    for args in (("jobs", "show", job_id, "--json"), ("jobs", "list", "--json")):
        written = invoke(cli_env, *args)
        assert written.exit_code == 0, (args, written.output)
        assert not set(BIDI_CONTROLS) & set(written.stdout), args
        parsed = json.loads(written.stdout)
        record = parsed if isinstance(parsed, dict) else parsed[0]
        assert (record["last_error"], record["payload"]) == (f"RuntimeError: {BIDI}", payload)
