"""What an operator sees when the setup is wrong: one line naming the fix, exit 1.

Each case runs the real command in a process whose environment holds no AWS setting and
whose ``HOME`` is empty, as on a fresh machine; the AWS ones reach the emulator.
"""

from __future__ import annotations

import contextlib
import http.server
import inspect
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sqsjobs.aws import SqsJobStore
from sqsjobs.cli import _worker
from sqsjobs.cli._config import AwsConfig, StoreConfig
from tests.aws.emulator import unique_prefix

from .process import EMULATOR_AWS, clean_env, closed_port, run

pytestmark = pytest.mark.slow  # a command process per case

NO_STORE = {"SQSJOBS_TABLE": "jobs", "SQSJOBS_QUEUES": "default=https://sqs.example/1/jobs"}


def assert_one_line_error(result: object, exit_code: int = 1) -> str:
    assert result.returncode == exit_code, (result.stdout, result.stderr)  # type: ignore[attr-defined]
    stderr: str = result.stderr  # type: ignore[attr-defined]
    assert stderr.startswith("error: "), stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    return stderr


@pytest.mark.parametrize("args", [["jobs", "list"], ["stats", "--stack", "jobs-prod"]])
def test_no_region_names_the_option_and_both_variables(tmp_path: Path, args: list[str]) -> None:
    result = run(clean_env(tmp_path, **NO_STORE), *args)
    stderr = assert_one_line_error(result)
    assert stderr == (
        "error: No AWS region configured: pass --region REGION "
        "or set AWS_REGION (or AWS_DEFAULT_REGION)\n"
    )


def test_aws_region_alone_is_enough_for_the_command_line(tmp_path: Path) -> None:
    """botocore reads only AWS_DEFAULT_REGION; the command line reads AWS_REGION too."""
    result = run(clean_env(tmp_path, AWS_REGION="eu-west-1"), "stats", "--stack", "jobs-prod")
    assert "No AWS credentials found" in assert_one_line_error(result)


def test_no_credentials_names_the_profile_and_the_key_variables(tmp_path: Path) -> None:
    env = clean_env(tmp_path, AWS_DEFAULT_REGION="eu-west-1", **NO_STORE)
    stderr = assert_one_line_error(run(env, "dlq", "list"))
    assert stderr.startswith("error: No AWS credentials found: set AWS_PROFILE")
    assert "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" in stderr


def test_a_missing_stack_is_named_with_the_deploy_command(
    tmp_path: Path, aws_endpoint: str
) -> None:
    env = clean_env(tmp_path, AWS_ENDPOINT_URL=aws_endpoint, **EMULATOR_AWS)
    stack = f"{unique_prefix()}-façade"[:20]
    stderr = assert_one_line_error(run(env, "jobs", "list", "--stack", stack))
    assert stderr == (
        f"error: Stack '{stack}' does not exist in this region: deploy it with "
        f"`sqsjobs infra deploy --stack {stack}`, or check --stack (SQSJOBS_STACK) and --region\n"
    )


def test_a_missing_table_is_named(tmp_path: Path, aws_endpoint: str, store: SqsJobStore) -> None:
    table = f"{unique_prefix()}-gone"
    queues = ",".join(f"{q}={url}" for q, url in store.queue_urls.items())
    env = clean_env(
        tmp_path,
        AWS_ENDPOINT_URL=aws_endpoint,
        SQSJOBS_TABLE=table,
        SQSJOBS_QUEUES=queues,
        **EMULATOR_AWS,
    )
    for args in (["jobs", "list"], ["stats"], ["enqueue", "report.build"]):
        stderr = assert_one_line_error(run(env, *args))
        assert stderr == (
            f"error: Job table '{table}' (SQSJOBS_TABLE's) does not exist in this region: "
            "check --region, or deploy it with `sqsjobs infra deploy --stack NAME`\n"
        )


def test_a_missing_queue_is_named(tmp_path: Path, aws_endpoint: str, store: SqsJobStore) -> None:
    gone = store.queue_urls["default"] + "-gone"
    env = clean_env(
        tmp_path,
        AWS_ENDPOINT_URL=aws_endpoint,
        SQSJOBS_TABLE=store.table_name,
        SQSJOBS_QUEUES=f"default={gone}",
        **EMULATOR_AWS,
    )
    stderr = assert_one_line_error(run(env, "stats"))
    assert f"A queue of this store (SQSJOBS_QUEUES's default={gone}) does not exist" in stderr
    assert stderr.rstrip().endswith("deploy it with `sqsjobs infra deploy --stack NAME`")


def test_a_missing_profile_is_named_with_how_to_list_them(tmp_path: Path) -> None:
    env = clean_env(tmp_path, AWS_DEFAULT_REGION="eu-west-1", AWS_PROFILE="nosuch", **NO_STORE)
    stderr = assert_one_line_error(run(env, "jobs", "list"))
    assert stderr.startswith("error: AWS profile 'nosuch' does not exist: set AWS_PROFILE")


def test_an_endpoint_that_answers_but_is_no_aws_is_named(tmp_path: Path) -> None:
    """A web page where AWS should be (a wrong port): botocore takes it for a success."""
    with web_page() as endpoint:
        queues = f"default={endpoint}/123456789012/jobs"
        env = clean_env(tmp_path, SQSJOBS_TABLE="jobs", SQSJOBS_QUEUES=queues, **EMULATOR_AWS)
        for args in (["enqueue", "report.build"], ["jobs", "show", "0123abcd"]):
            stderr = assert_one_line_error(run(env, *args, "--endpoint-url", endpoint))
            assert stderr.startswith(f"error: {endpoint} answered, but not as AWS does: check")


@contextlib.contextmanager
def web_page() -> Iterator[str]:
    """A loopback server answering every request with a small HTML page."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = b"<!doctype html><title>Welcome</title><p>It works!</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_debug_adds_the_traceback(tmp_path: Path) -> None:
    result = run(clean_env(tmp_path, **NO_STORE), "jobs", "list", "--debug")
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("error: No AWS region configured")


UNREACHABLE_COMMANDS = [
    ["jobs", "list"],
    ["jobs", "show", "0123abcd"],
    ["stats"],
    ["dlq", "list"],
    ["dlq", "list", "--peek"],
    ["dlq", "redrive"],
    ["enqueue", "report.build"],
    ["reconcile"],
    ["stats", "--stack", "jobs-prod"],
    ["infra", "deploy", "--stack", "jobs-prod"],
]


@pytest.mark.parametrize("args", UNREACHABLE_COMMANDS, ids=" ".join)
def test_operator_commands_give_up_on_an_unreachable_endpoint_within_seconds(
    tmp_path: Path, args: list[str]
) -> None:
    """A refused connection, one retry (the operator's client policy, tested below), then
    one line naming the endpoint; a command that kept retrying fails at ``run``'s timeout."""
    endpoint = f"http://127.0.0.1:{closed_port()}"
    queues = f"default={endpoint}/123456789012/jobs"
    env = clean_env(tmp_path, SQSJOBS_TABLE="jobs", SQSJOBS_QUEUES=queues, **EMULATOR_AWS)
    result = run(env, *args, "--endpoint-url", endpoint)
    stderr = assert_one_line_error(result)
    assert stderr.startswith(f"error: Could not connect to {endpoint}/: check --endpoint-url")


def test_only_the_worker_opens_its_store_with_botocore_s_patient_policy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SQSJOBS_TABLE", "jobs")
    monkeypatch.setenv("SQSJOBS_QUEUES", "default=https://sqs.example/1/jobs")
    config = StoreConfig(aws=AwsConfig("http://127.0.0.1:1", "eu-west-1"))
    with config.open() as operator, config.open(patient=True) as worker:
        assert operator._state.endpoint.client_options()["connect_timeout"] == 2.0
        assert operator._state.endpoint.client_options()["retries"]["total_max_attempts"] == 2
        assert "connect_timeout" not in worker._state.endpoint.client_options()
        assert worker._state.endpoint.client_options()["retries"]["total_max_attempts"] == 5
    opened = "config.open(patient=True, wait_time=options.wait_time)"
    assert opened in inspect.getsource(_worker.serve)


def test_the_client_policy_is_checked() -> None:
    with pytest.raises(ValueError, match="max_attempts must be"):
        SqsJobStore(table_name="jobs", queue_urls={"default": "https://q"}, max_attempts=0)
    with pytest.raises(ValueError, match="connect_timeout must be"):
        SqsJobStore(table_name="jobs", queue_urls={"default": "https://q"}, connect_timeout=-1)
