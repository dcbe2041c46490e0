"""``jobs list`` tables at 80 and 120 columns: no column breaks a word, no error loses its class,
and every row's id (a prefix below 120 columns) is one ``jobs show`` takes.

The jobs are the kind an operator meets when looking for recent failures: unicode handler
and queue names, errors from handlers and from AWS with long messages in several scripts,
a dotted exception class, a message with no class, and a completed job whose last error
is an earlier attempt's.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console

from sqsjobs import Job, JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.cli._columns import CLASS_WORDS, ERROR_CLASS, SHORT_ID, ErrorCell, prefix_length
from sqsjobs.cli._render import instant, job_table

from .conftest import Env, invoke

WIDTHS = [80, 120]
CREATED = datetime.fromtimestamp(1_796_094_741.2439704, UTC)
FATAL = (
    "JobFatalError: 倉庫が拒否しました: the warehouse refused order Nº 7 "
    "(Zoë Ørsted, 東京都) after 3 retries with HTTP 409 Conflict"
)
THROTTLED = (
    "botocore.exceptions.ClientError: An error occurred "
    "(ProvisionedThroughputExceededException) when calling the PutItem operation: "
    "The level of configured provisioned throughput for the table was exceeded."
)
TIMEOUT = "JobTimeoutError: attempt 5 of 5 exceeded its timeout of 30s rendering «Übersicht Q3»"
RESET = "ConnectionResetError: [Errno 104] Connection reset by peer"
EXPIRED = "lease expired after final attempt"


def job(status: JobStatus, name: str, error: str | None, **fields: Any) -> Job:
    return Job.model_validate(
        {
            "id": uuid.uuid4().hex,
            "queue": "default",
            "name": name,
            "payload": {"to": "zoë@example.com"},
            "status": status,
            "attempts": 5 if status is JobStatus.DEAD else 1,
            "max_attempts": 5,
            "run_at": CREATED,
            "created_at": CREATED,
            "updated_at": CREATED,
            "lease_until": None,
            "locked_by": None,
            "lease_token": None,
            "lease": 30.0,
            "timeout": 30.0,
            "priority": 0,
            "idempotency_key": None,
            "tenant": None,
            "last_error": error,
            "completed_at": CREATED if status is JobStatus.COMPLETED else None,
            "result": "sent" if status is JobStatus.COMPLETED else None,
            **fields,
        }
    )


JOBS = [
    job(JobStatus.DEAD, "entrepôt.réserver", FATAL, queue="facturación-eu"),
    job(JobStatus.COMPLETED, "email.send", RESET),
    job(JobStatus.DEAD, "東京.配送.通知", THROTTLED),
    job(JobStatus.CANCELLED, "zoë.überprüfen", None),
    job(JobStatus.DEAD, "rapport.mensuel", TIMEOUT, queue="reports"),
    job(JobStatus.DEAD, "invoice.pdf", EXPIRED),
    job(JobStatus.QUEUED, "webhook.deliver", None),
]


def rendered(width: int, *, styles: bool = False) -> str:
    console = Console(
        width=width, record=True, color_system="standard" if styles else None, force_terminal=styles
    )
    console.print(job_table("Jobs (completed or dead or cancelled) in every queue", JOBS))
    return console.export_text(styles=styles)


def cells(line: str) -> list[str]:
    return [cell[1:].rstrip() for cell in line.strip()[1:-1].split(line.strip()[0])]


def parsed(output: str) -> tuple[list[str], list[dict[str, list[str]]]]:
    """The headers, and each row's cells as the lines each column shows; a row starts on
    the line whose status cell is set (a status never takes two lines)."""
    header_lines = [cells(line) for line in output.splitlines() if line.startswith("┃")]
    headers = [
        " ".join(part for part in column if part) for column in zip(*header_lines, strict=True)
    ]
    rows: list[dict[str, list[str]]] = []
    for line in output.splitlines():
        if not line.startswith("│"):
            continue
        values = dict(zip(headers, cells(line), strict=True))
        if values["status"]:
            rows.append({header: [] for header in headers})
        for header, value in values.items():
            if value:
                rows[-1][header].append(value)
    return headers, rows


@pytest.mark.parametrize("width", WIDTHS)
def test_no_column_breaks_a_word(width: int) -> None:
    output = rendered(width)
    widest = max(output.splitlines(), key=cell_len)
    assert cell_len(widest) <= width, widest
    headers, rows = parsed(output)
    assert set(headers) <= {
        "id",
        "queue",
        "name",
        "status",
        "attempts",
        "run_at (UTC)",
        "last_error",
    }
    assert headers[:4] == ["id", "queue", "name", "status"] and headers[-1] == "last_error"
    assert len(rows) == len(JOBS)
    for shown, record in zip(rows, JOBS, strict=True):
        assert shown["id"] == [record.id if width >= 120 else record.id[:SHORT_ID]]
        for field in ("queue", "name"):
            lines = shown[field]
            assert "".join(lines) == getattr(record, field)
            assert all(line[-1] in ".-_" for line in lines[:-1]), lines  # at a separator
        assert shown["status"] == [record.status.value]
        if "attempts" in shown:
            assert shown["attempts"] == [f"{record.attempts}/{record.max_attempts}"]
        if "run_at (UTC)" in shown:
            assert " ".join(shown["run_at (UTC)"]) == instant(record.run_at)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_error_column_keeps_the_class_and_cuts_the_message(width: int) -> None:
    _, rows = parsed(rendered(width))
    for shown, record in zip(rows, JOBS, strict=True):
        error = record.last_error or ""
        lines = shown["last_error"]
        if not error:
            assert lines == []
            continue
        marker = "earlier:" if record.status is JobStatus.COMPLETED else ""
        text = "".join(lines)
        squeezed = re.sub(r"\s", "", text)
        expected = re.sub(r"\s", "", marker + error)
        found = ERROR_CLASS.match(error)
        if found is None:  # no class to keep: the text cut at its end
            assert squeezed.rstrip("…") == expected[: len(squeezed.rstrip("…"))]
            continue
        head = marker + found[1]
        assert squeezed.startswith(head), (head, lines)
        # Where the class goes on to the next line, it is between two of its words.
        bounds = {len(marker) + len(part) for part in _prefixes(found[1])}
        breaks = _breaks(lines)
        assert {b for b in breaks if len(marker) < b < len(head)} <= bounds, (lines, breaks)
        if squeezed != expected:  # cut: the message, never the class
            assert text.endswith("…")
            assert expected.startswith(squeezed[:-1])
        if len(found[1]) <= 15:
            assert any(found[1] in line for line in lines), lines  # on one line


def _prefixes(name: str) -> list[str]:
    words = [word for word in CLASS_WORDS.split(name) if word]
    return ["".join(words[:count]) for count in range(1, len(words))]


def _breaks(lines: list[str]) -> list[int]:
    """Where, in the lines joined without spaces, each line after the first begins."""
    breaks, position = [], 0
    for line in lines[:-1]:
        position += len(re.sub(r"\s", "", line))
        breaks.append(position)
    return breaks


def test_at_120_columns_the_errors_show_their_message_too() -> None:
    _, rows = parsed(rendered(120))
    fatal = " ".join(rows[0]["last_error"])
    assert fatal.startswith("JobFatalError:") and "倉庫が" in fatal
    assert "attempt 5 of 5" in " ".join(rows[4]["last_error"])


@pytest.mark.parametrize("width", WIDTHS)
def test_a_completed_jobs_error_is_history_dim_and_marked(width: int) -> None:
    output = rendered(width, styles=True)
    assert "\x1b[2mearlier:" in output
    assert "\x1b[2mJobFatalError" not in output  # a dead job's error is not dimmed
    _, rows = parsed(rendered(width))
    assert rows[1]["last_error"][0].startswith("earlier:")
    assert not any(line.startswith("earlier:") for row in rows[2:] for line in row["last_error"])


def test_at_80_columns_what_is_left_out_is_said() -> None:
    output = rendered(80)
    headers, _ = parsed(output)
    assert "run_at (UTC)" not in headers
    assert "Left out at this width: run_at (UTC)" in output
    assert "Left out" not in rendered(120)


def test_below_120_columns_an_id_is_a_prefix_on_one_line_and_the_caption_says_so() -> None:
    output = rendered(80)
    assert "id: first 12 characters, enough for jobs show (whole from 120 columns, --json)" in (
        output
    )
    assert "first 12 characters" not in rendered(120)
    # Ids sharing their first 12 characters are shown as far as they differ.
    twins = [
        job(JobStatus.QUEUED, "a.b", None, id=f"{'ab' * 7}{tail}") for tail in ("0" * 18, "1" * 18)
    ]
    console = Console(width=80, record=True, color_system=None)
    console.print(job_table("Jobs", twins))
    _, rows = parsed(console.export_text())
    assert [row["id"] for row in rows] == [["ab" * 7 + "0"], ["ab" * 7 + "1"]]


def test_the_prefix_is_the_shortest_that_tells_the_ids_apart() -> None:
    assert prefix_length(["0123456789abcdef" * 2, "fedcba9876543210" * 2]) == SHORT_ID
    assert prefix_length(["a" * 32, "a" * 31 + "b"]) == 32
    assert prefix_length(["a" * 32, "a" * 32]) == SHORT_ID  # the same job twice
    assert prefix_length([], least=8) == 8


@pytest.mark.parametrize(
    ("error", "width", "lines"),
    [
        (RESET, 16, ["ConnectionReset", "Error: [Errno 1…"]),
        (RESET, 12, ["Connection", "ResetError…"]),
        ("JobFatalError: the warehouse refused", 16, ["JobFatalError…"]),
        ("JobFatalError: the warehouse refused", 24, ["JobFatalError: the ware…"]),
        ("JobFatalError: 倉庫が拒否しました", 22, ["JobFatalError: 倉庫が…"]),
        (EXPIRED, 16, ["lease expired a…"]),
        ("KeyError", 5, ["Key", "Error"]),
    ],
)
def test_an_error_cell_wraps_its_class_between_words_only(
    error: str, width: int, lines: list[str]
) -> None:
    assert ErrorCell(error).lines(width) == lines


def test_an_error_cell_goes_on_over_the_lines_its_row_has_anyway() -> None:
    cell = ErrorCell("JobFatalError: the warehouse refused order 7 after 3 retries", most=2)
    assert cell.lines(20) == ["JobFatalError: the", "warehouse refused o…"]
    earlier = ErrorCell(RESET, earlier=True, most=2)
    assert earlier.lines(16) == ["earlier:", "ConnectionReset", "Error: [Errno 1…"]
    assert ErrorCell(RESET, earlier=True).lines(80) == [f"earlier: {RESET}"]


def test_an_id_copied_from_an_80_column_list_is_one_jobs_show_takes(
    cli_env: Env, store: SqsJobStore
) -> None:
    queue = SyncJobQueue(store)
    made = [queue.enqueue("email.send", {"n": n}).job.id for n in range(3)]
    listed = invoke({**cli_env, "COLUMNS": "80"}, "jobs", "list")
    assert listed.exit_code == 0, listed.output
    _, rows = parsed(listed.stdout)
    copied = [row["id"] for row in rows]
    assert copied == [[job_id[:SHORT_ID]] for job_id in made]
    shown = invoke(cli_env, "jobs", "show", copied[1][0], "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["id"] == made[1]
