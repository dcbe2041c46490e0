"""The ``sqsjobs`` command line itself: the demo's outcome, exit codes and one-line errors.

The demo runs once per store through click's ``CliRunner`` (shared by the tests that
read its output): on the local AWS emulator (the default: CloudFormation, SQS and
DynamoDB over HTTP) and on the memory store (``--memory``). It runs once more as a real
process through the installed console script, so the entry point in pyproject.toml is
exercised too. Its scenario fixes every job's fate, so the counts below are exact.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from botocore.exceptions import EndpointConnectionError
from click.testing import CliRunner, Result

from sqsjobs.cli import _demo, main

# Plain, wide, uncoloured output whatever the terminal running the tests.
ENV = {"COLUMNS": "100", "NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None}
ROW = re.compile(
    r"^│ (?P<id>[0-9a-f]{8}) +│ (?P<name>\S+) +│ (?P<status>\w+) +│ (?P<tries>\d+/\d+)"
)
SUMMARY = re.compile(
    r"11 jobs \(12 enqueues, 1 duplicate\) in [\d.]+s: completed 8 +dead 2 +cancelled 1"
)

# Every job's fate as the scenario dictates it: (name, status, attempts).
EXPECTED_JOBS = Counter(
    {
        ("email.send", "completed", "1/5"): 3,  # welcome (once), receipt, delayed reminder
        ("email.send", "cancelled", "0/5"): 1,  # the newsletter, cancelled before it ran
        ("image.resize", "completed", "1/5"): 3,  # two at once, one delayed
        ("report.build", "completed", "3/5"): 1,  # fails twice, then succeeds
        ("invoice.charge", "completed", "1/5"): 1,
        ("invoice.charge", "dead", "1/5"): 1,  # JobFatalError: no retry
        ("legacy.export", "dead", "1/5"): 1,  # no handler registered
    }
)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=ENV)


def job_rows(output: str) -> list[re.Match[str]]:
    """The rows of the final "Jobs" table (the enqueue table's rows start with text)."""
    return [m for line in output.splitlines() if (m := ROW.match(line))]


def assert_demo_outcome(output: str) -> None:
    rows = job_rows(output)
    assert Counter((m["name"], m["status"], m["tries"]) for m in rows) == EXPECTED_JOBS
    assert SUMMARY.search(output), output
    assert "Dead letters (2)" in output
    assert "JobFatalError: Unknown job handler: 'legacy.export'" in output
    assert '{"invoice": "inv_1002", "cents": -500}' in output


def assert_emulator_outcome(output: str) -> None:
    """The stack was deployed through CloudFormation and SQS holds both dead letters."""
    assert re.search(r"sqsjobs-demo-\w+ +AWS::CloudFormation::Stack CREATE_COMPLETE", output)
    assert "SQS dead-letter queue of 'default': 2 message(s) waiting for redrive" in output
    assert "moto" not in output.lower()  # the emulator's notices are filtered out


@pytest.fixture(scope="module", params=["emulator", "memory"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def demo_run(store_kind: str) -> Result:
    return invoke("demo", *(["--memory"] if store_kind == "memory" else []))


def test_demo_exits_0_with_the_status_table_and_dead_letters(demo_run: Result) -> None:
    assert demo_run.exit_code == 0, demo_run.output
    assert demo_run.stderr == ""
    assert re.search(r"┃ id +┃ name +┃ status +┃ attempts +┃ last_error", demo_run.stdout)
    assert_demo_outcome(demo_run.stdout)


def test_the_demo_runs_on_the_emulator_unless_told(demo_run: Result, store_kind: str) -> None:
    first_line = demo_run.stdout.splitlines()[0]
    if store_kind == "memory":
        assert first_line == "sqsjobs demo on the in-process memory store"
        assert "CloudFormation::Stack" not in demo_run.stdout
    else:
        assert first_line.startswith("sqsjobs demo on a local AWS emulator")
        assert_emulator_outcome(demo_run.stdout)


def test_demo_shows_the_duplicate_as_the_first_enqueue_s_job(demo_run: Result) -> None:
    welcome = [line for line in demo_run.stdout.splitlines() if "welcome email" in line]
    assert len(welcome) == 2
    first_id, second_id = (re.findall(r"│ ([0-9a-f]{8}) │", line)[0] for line in welcome)
    assert first_id == second_id
    assert welcome[1].rstrip("│ ").endswith("yes")


def test_demo_logs_the_retries_and_dead_letters_as_they_happen(demo_run: Result) -> None:
    event = re.compile(r"^(?P<event>complete|retry|dead) +(?P<name>\S+) [0-9a-f]{8} ")
    events = [
        (m["event"], m["name"]) for line in demo_run.stdout.splitlines() if (m := event.match(line))
    ]
    assert Counter(events) == {
        ("complete", "email.send"): 3,
        ("complete", "image.resize"): 3,
        ("complete", "report.build"): 1,
        ("complete", "invoice.charge"): 1,
        ("retry", "report.build"): 2,
        ("dead", "invoice.charge"): 1,
        ("dead", "legacy.export"): 1,
    }


@pytest.mark.slow
def test_demo_runs_as_the_installed_console_script() -> None:
    script = Path(sys.executable).with_name("sqsjobs")
    completed = subprocess.run(
        [str(script), "demo"], capture_output=True, text=True, timeout=60, env=_process_env()
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    assert_demo_outcome(completed.stdout)
    assert_emulator_outcome(completed.stdout)


@pytest.mark.parametrize(
    "args",
    [["nope"], ["demo", "--concurrency", "0"], ["demo", "--timeout", "soon"], ["--bogus"]],
)
def test_bad_usage_exits_2(args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert "Usage:" in result.stderr


def test_a_failure_prints_one_line_and_exits_1() -> None:
    result = invoke("demo", "--memory", "--timeout", "0.05")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [result.stderr.strip()]  # exactly one line, no traceback
    assert result.stderr.startswith("error: The demo's jobs did not finish within 0.05s (")
    assert "Traceback" not in result.output


def test_debug_adds_the_traceback() -> None:
    result = invoke("--debug", "demo", "--memory", "--timeout", "0.05")
    assert result.exit_code == 1
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert "ScenarioTimeout" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("error: The demo's jobs did not finish")


@pytest.mark.parametrize(
    "args",
    [
        ["demo", "--memory", "--timeout", "0.05", "--debug"],
        ["demo", "--debug", "--memory", "--timeout", "0.05"],
    ],
)
def test_debug_after_the_subcommand_adds_the_traceback_too(args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == 1
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert result.stderr.splitlines()[-1].startswith("error: The demo's jobs did not finish")


def test_debug_is_accepted_after_a_subgroup_s_command() -> None:
    result = invoke("jobs", "list", "--debug", "--help")
    assert result.exit_code == 0, result.output
    assert "--debug" in result.stdout


def test_an_unexpected_error_names_its_type(monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("queue_url")

    monkeypatch.setattr(_demo, "enqueue_plan", broken)
    result = invoke("demo", "--memory")
    assert result.exit_code == 1
    assert result.stderr == "error: KeyError: 'queue_url'\n"


@pytest.mark.parametrize("debug", [False, True])
def test_error_lines_and_tracebacks_never_show_url_credentials(
    monkeypatch: pytest.MonkeyPatch, debug: bool
) -> None:
    url = (
        "https://AKIAEXAMPLE:wJalr%2FXUtnFEMI@sqs.eu-west-1.amazonaws.com/000000000000/jobs"
        "?X-Amz-Credential=AKIAEXAMPLE%2F20300101%2Feu-west-1&X-Amz-Security-Token=FQoGZXIv"
        "&X-Amz-Signature=9f2c07ab&Action=ReceiveMessage"
    )

    async def unreachable(*args: object, **kwargs: object) -> None:
        raise EndpointConnectionError(endpoint_url=f"{url}\n\x1b[2Jforged")

    monkeypatch.setattr(_demo, "enqueue_plan", unreachable)
    result = invoke(*(["--debug"] if debug else []), "demo", "--memory")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "error: Could not connect to "
        "https://***@sqs.eu-west-1.amazonaws.com/000000000000/jobs?X-Amz-Credential=***"
        "&X-Amz-Security-Token=***&X-Amz-Signature=***&Action=ReceiveMessage \\x1b[2Jforged: "
        "check --endpoint-url (or AWS_ENDPOINT_URL) and --region, and that the endpoint is up"
    )
    assert ("Traceback (most recent call last)" in result.stderr) is debug
    for secret in ("AKIAEXAMPLE", "wJalr", "FQoGZXIv", "9f2c07ab", "\x1b"):
        assert secret not in result.stderr


@pytest.mark.slow
def test_python_m_sqsjobs_cli_reports_errors_in_one_line() -> None:
    argv = [sys.executable, "-m", "sqsjobs.cli", "demo", "--memory", "--timeout", "0.05"]
    quiet = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=_process_env())
    assert quiet.returncode == 1
    assert len(quiet.stderr.splitlines()) == 1
    assert quiet.stderr.startswith("error: The demo's jobs did not finish")
    loud = subprocess.run(
        [*argv[:3], "--debug", *argv[3:]],
        capture_output=True,
        text=True,
        timeout=60,
        env=_process_env(),
    )
    assert loud.returncode == 1
    assert "Traceback (most recent call last)" in loud.stderr
    usage = subprocess.run([*argv[:3], "nope"], capture_output=True, timeout=60)
    assert usage.returncode == 2


def test_the_package_root_does_not_load_the_cli() -> None:
    code = "import sys, sqsjobs; print(sorted({'click', 'rich', 'sqsjobs.cli'} & set(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"


def _process_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("FORCE_COLOR",)}
    return {**env, "COLUMNS": "100", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
