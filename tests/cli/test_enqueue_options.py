"""``sqsjobs enqueue`` run as a process: payloads from files and stdin, every enqueue option.

Each option is checked where it matters, in the stored record as ``jobs show --json``
prints it; each refusal exits 2 with one line naming what is allowed, and leaves the
store empty.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from sqsjobs import SyncJobQueue
from sqsjobs.aws import SqsJobStore
from tests.aws.emulator import unique_prefix

from .conftest import Env
from .process import run_cli

LIMIT = 65536  # the producer's default payload_max_bytes
OPTIONS = ("queue", "status", "priority", "max_attempts", "timeout", "lease")
OPTIONS += ("idempotency_key", "tenant", "group")


@pytest.fixture
def store(aws_endpoint: str) -> Iterator[SqsJobStore]:
    """Two queues, so ``--queue`` has somewhere to go besides the default."""
    made = SqsJobStore.create(
        unique_prefix(), queues=("default", "reports"), endpoint_url=aws_endpoint, wait_time=1.0
    )
    try:
        yield made
    finally:
        made.close()


def shown(env: Env, job_id: str) -> dict[str, Any]:
    result = run_cli(env, "jobs", "show", job_id, "--json")
    assert result.returncode == 0, result.stderr
    record: dict[str, Any] = json.loads(result.stdout)
    return record


def enqueued(env: Env, *args: str, stdin: bytes | None = None) -> dict[str, Any]:
    """Enqueue with ``--json``; the printed record, checked against the stored one."""
    result = run_cli(env, "enqueue", *args, "--json", stdin=stdin)
    assert result.returncode == 0, result.stderr
    record: dict[str, Any] = json.loads(result.stdout)
    assert shown(env, record["id"]) == record
    return record


def text_of(size: int) -> str:
    """Text of exactly ``size`` UTF-8 bytes, mixing 1- to 4-byte characters."""
    words = "Año nuevo — 🦀 crab, 中文, ñandú € "
    text = ""
    while len((text + words).encode()) <= size:
        text += words
    return text + "a" * (size - len(text.encode()))


def payload_of(size: int) -> dict[str, str]:
    """A payload whose stored (compact) JSON is exactly ``size`` bytes."""
    overhead = len(json.dumps({"nota": ""}, separators=(",", ":")).encode())
    payload = {"nota": text_of(size - overhead)}
    compact = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    assert len(compact.encode()) == size
    return payload


def test_a_file_payload_of_unicode_at_the_size_cap(
    cli_env: Env, store: SqsJobStore, tmp_path: Path
) -> None:
    at_cap = tmp_path / "at-cap.json"
    # Pretty-printed, with a byte-order mark: the file is larger than the cap, the payload not.
    at_cap.write_bytes(
        b"\xef\xbb\xbf" + json.dumps(payload_of(LIMIT), indent=4, ensure_ascii=False).encode()
    )
    assert at_cap.stat().st_size > LIMIT
    record = enqueued(cli_env, "notes.index", "--payload", f"@{at_cap}")
    assert record["payload"] == payload_of(LIMIT)

    over = tmp_path / "over-cap.json"
    over.write_text(json.dumps(payload_of(LIMIT + 1), ensure_ascii=False), encoding="utf-8")
    refused = run_cli(cli_env, "enqueue", "notes.index", "--payload", f"@{over}")
    assert refused.returncode == 2
    assert f"is {LIMIT + 1} bytes as JSON (UTF-8); the limit is {LIMIT} bytes" in refused.stderr
    assert [job.id for job in SyncJobQueue(store).list().jobs] == [record["id"]]


def test_a_payload_from_stdin(cli_env: Env) -> None:
    payload = {"para": "zoë@example.com", "líneas": [{"sku": "lámpara", "n": 2}], "ok": None}
    stdin = json.dumps(payload, indent=2, ensure_ascii=False).encode() + b"\n"
    record = enqueued(cli_env, "email.send", "--payload", "-", stdin=stdin)
    assert record["payload"] == payload


def test_every_option_reaches_the_stored_record(cli_env: Env) -> None:
    when = (datetime.now(UTC) + timedelta(hours=3)).astimezone(timezone(timedelta(hours=2)))
    record = enqueued(
        cli_env,
        "report.build",
        "--payload",
        '{"mes": "mayo"}',
        "--queue",
        "reports",
        "--run-at",
        when.isoformat(),
        "--priority",
        "-7",
        "--max-attempts",
        "9",
        "--timeout",
        "120.5",
        "--lease",
        "45",
        "--idempotency-key",
        "report/2026-05#1",
        "--tenant",
        "acme-7",
        "--group",
        "acme-7/reports",
        "--label",
        "team=finanzen",
        "--label",
        "Quelle=Import 7 — ü=ok",
    )
    assert datetime.fromisoformat(record["run_at"]) == when
    assert record["labels"] == {"team": "finanzen", "Quelle": "Import 7 — ü=ok"}
    assert {name: record[name] for name in OPTIONS} == {
        "queue": "reports",
        "status": "delayed",
        "priority": -7,
        "max_attempts": 9,
        "timeout": 120.5,
        "lease": 45.0,
        "idempotency_key": "report/2026-05#1",
        "tenant": "acme-7",
        "group": "acme-7/reports",
    }


def test_delay_and_the_defaults(cli_env: Env) -> None:
    record = enqueued(cli_env, "email.send", "--delay", "90")
    waits = datetime.fromisoformat(record["run_at"]) - datetime.fromisoformat(record["created_at"])
    assert waits == timedelta(seconds=90)
    assert (record["queue"], record["max_attempts"], record["timeout"], record["lease"]) == (
        "default",
        5,
        30.0,
        30.0,
    )
    assert (record["priority"], record["payload"], record["status"]) == (0, None, "delayed")


def test_without_json_the_job_id_is_printed(cli_env: Env) -> None:
    result = run_cli(cli_env, "enqueue", "email.send", "--priority", "3")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Enqueued job ")
    job_id = result.stdout.split()[2]
    assert shown(cli_env, job_id)["priority"] == 3


FAR = (datetime.now(UTC) + timedelta(days=400)).isoformat()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-attempts", "0"], "max_attempts must be an int >= 1, got 0"),
        (["--max-attempts", "2.5"], "'2.5' is not a valid integer"),
        (["--timeout", "-1"], "timeout must be a finite number of seconds >= 0 and <= 604800"),
        (["--timeout", "nan"], "timeout must be a finite number of seconds"),
        (["--lease", "0"], "lease must be a finite number of seconds > 0 and <= 43200"),
        (["--lease", "43201"], "(SQS's visibility cap), got 43201.0"),
        (["--priority", "2147483648"], "priority must be an int from -2147483648 to 2147483647"),
        (["--delay", "1e400"], "delay must be a finite number of seconds >= 0 and <= 31622400"),
        (["--run-at", "2026-12-24T09:00:00"], "'2026-12-24T09:00:00' has no UTC offset"),
        (["--run-at", "next tuesday"], "is not an ISO 8601 date and time"),
        (["--run-at", FAR], "must be at most 366 days (31622400 s) after now"),
        (["--run-at", FAR, "--delay", "5"], "Pass --delay or --run-at, not both."),
        (["--tenant", "Ácme"], "Invalid tenant 'Ácme': must match"),
        (["--group", "a b"], "Invalid group 'a b': must match [a-zA-Z0-9._:/@-]{1,128}"),
        (["--payload", "@"], "expected a file name after '@'"),
        (["--payload", '{"a": 1, "a": 2}'], "not valid JSON: key 'a' appears twice"),
        (["--payload", "[1, Infinity]"], "Infinity is not a JSON number"),
        (["--label", "team"], "expected KEY=VALUE, got 'team'"),
        (["--label", "=billing"], "label key must be 1 to 64 printable characters"),
        (["--label", "a=b\tc"], "label 'a' must be 0 to 128 printable characters"),
        ([f"--label=k{n}=v" for n in range(11)], "labels hold at most 10 entries, not 11"),
        (["--after", "ab" * 16], f"Unknown parent job {'ab' * 16!r} in after"),
        (["--after", "x1", "--after", "x1"], "after names job 'x1' more than once"),
    ],
)
def test_bad_values_exit_2_naming_what_is_allowed(
    cli_env: Env, store: SqsJobStore, args: list[str], message: str
) -> None:
    result = run_cli(cli_env, "enqueue", "email.send", *args)
    assert result.returncode == 2, result.stderr
    [error] = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert message in error
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert SyncJobQueue(store).list().jobs == []


def test_unreadable_payload_files_are_named(cli_env: Env, tmp_path: Path) -> None:
    binary = tmp_path / "latin1.json"
    binary.write_bytes('{"ciudad": "Málaga"}'.encode("latin-1"))
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "to": "ana@example.com",\n  "n": tru\n}\n', encoding="utf-8")
    for path, message in [
        (tmp_path / "missing.json", "cannot read payload file '{}': No such file or directory"),
        (tmp_path, "cannot read payload file '{}': Is a directory"),
        (binary, "payload file '{}' is not UTF-8 text: byte 0xe1 at offset 13"),
        (broken, "not valid JSON in '{}': Expecting value at line 3 column 8"),
    ]:
        result = run_cli(cli_env, "enqueue", "email.send", "--payload", f"@{path}")
        assert result.returncode == 2, result.stderr
        assert message.format(path) in result.stderr


def test_json_of_a_duplicate_is_the_existing_job(cli_env: Env) -> None:
    args = ["report.build", "--payload", '{"mes": "junio"}', "--idempotency-key", "jun"]
    first = enqueued(cli_env, *args)
    again = enqueued(cli_env, *args, "--priority", "9")  # other options of a duplicate are ignored
    assert again == first


def test_after_makes_the_job_wait_for_its_parents(cli_env: Env) -> None:
    first = enqueued(cli_env, "ledger.extract", "--delay", "600")
    second = enqueued(cli_env, "ledger.extract", "--delay", "600")
    child = enqueued(cli_env, "ledger.load", "--after", first["id"], "--after", second["id"])
    assert (child["status"], child["after"]) == ("waiting", [first["id"], second["id"]])
