"""``sqsjobs dashboard`` and ``sqsjobs demo --dashboard`` as an operator runs them.

Each runs as a child process (``python -m sqsjobs.cli``) on a free port, is read over
HTTP, and is stopped with SIGINT (Ctrl-C), after which it must exit 0.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from sqsjobs.aws import SqsJobStore
from tests.aws.emulator import shared_endpoint, unique_prefix

from .conftest import csrf_token

CLI = [sys.executable, "-m", "sqsjobs.cli"]
URL = re.compile(r"Dashboard serving on (http://127\.0\.0\.1:\d+/) \((.+)\)")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.fixture
def store_env(pytestconfig: pytest.Config) -> Iterator[dict[str, str]]:
    endpoint = shared_endpoint(pytestconfig)
    store = SqsJobStore.create(unique_prefix(), endpoint_url=endpoint)
    try:
        yield {
            **os.environ,
            "NO_COLOR": "1",
            "SQSJOBS_TABLE": store.table_name,
            "SQSJOBS_QUEUES": ",".join(f"{q}={url}" for q, url in store.queue_urls.items()),
            "AWS_ENDPOINT_URL": endpoint,
        }
    finally:
        store.close()


@contextmanager
def running(env: dict[str, str], *args: str) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    """The command started; yields it with its URL and mode once it serves."""
    process = subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None
        lines: list[str] = []
        for line in process.stdout:
            lines.append(line)
            found = URL.search(line)
            if found:
                yield process, found.group(1), found.group(2)
                break
        else:
            raise AssertionError(f"never served: {''.join(lines)}{process.stderr.read()}")  # type: ignore[union-attr]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def stopped(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Ctrl-C, then the exit code and the rest of stdout."""
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert err == "", err
    return process.returncode, out


def test_the_dashboard_command_serves_read_only_on_loopback(store_env: dict[str, str]) -> None:
    with running(store_env, "dashboard", "--port", "0") as (process, url, mode):
        assert mode.startswith("read-only")
        overview = httpx2.get(url, timeout=10)
        assert overview.status_code == 200
        assert '<tr data-queue="default">' in overview.text
        assert '<td class="num dlq-depth">0</td>' in overview.text
        refused = httpx2.post(f"{url}dead/redrive", data={"csrf_token": "x"}, timeout=10)
        assert refused.status_code == 403 and "read-only" in refused.text
        rebound = httpx2.get(url, headers={"Host": "evil.example"}, timeout=10)
        assert rebound.status_code == 400 and "Host 'evil.example'" in rebound.text
        code, out = stopped(process)
    assert (code, out.splitlines()[-1]) == (0, "Dashboard stopped.")


def test_the_dashboard_command_answers_only_for_loopback_and_its_allowed_hosts(
    store_env: dict[str, str],
) -> None:
    """A page rebinding its name to 127.0.0.1 sends its own name as Host: refused."""
    args = ("dashboard", "--port", "0", "--allowed-host", "ops.example.com")
    with running(store_env, *args, "--allowed-host", "jobs.internal") as (process, url, _):
        assert process.stdout is not None  # the line printed right after the address:
        also = process.stdout.readline()
        assert also == "Also answering for Host ops.example.com, jobs.internal (any port).\n"
        port = url.rstrip("/").rsplit(":", 1)[1]
        refused = httpx2.get(url, headers={"Host": f"evil.example:{port}"}, timeout=10)
        assert refused.status_code == 400
        assert f"Host 'evil.example:{port}'" in refused.text and "--allowed-host" in refused.text
        assert "data-queue" not in refused.text
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "ops.example.com", "jobs.internal"):
            page = httpx2.get(url, headers={"Host": host}, timeout=10)
            assert page.status_code == 200 and '<tr data-queue="default">' in page.text, host
        assert stopped(process)[0] == 0


def test_behind_a_proxy_that_passes_host_and_scheme_actions_work(
    store_env: dict[str, str],
) -> None:
    """The documented nginx setup, as the command sees it: the browser's Host and Origin,
    and ``X-Forwarded-Proto`` from the proxy on 127.0.0.1 (which uvicorn believes)."""
    proxied = {"Host": "ops.example.com", "X-Forwarded-Proto": "https"}
    args = ("dashboard", "--port", "0", "--actions", "--allowed-host", "ops.example.com")
    with running(store_env, *args) as (process, url, _), httpx2.Client(base_url=url) as client:
        page = client.get("dead", headers=proxied, timeout=10)
        assert page.status_code == 200 and "Secure" in page.headers["set-cookie"]  # https seen
        session = page.headers["set-cookie"].split(";")[0]
        form = {"csrf_token": csrf_token(page.text), "queue": "", "name": ""}
        browser = {**proxied, "Origin": "https://ops.example.com", "Cookie": session}
        done = client.post("dead/redrive", data=form, headers=browser, timeout=10)
        assert done.status_code == 303
        assert done.headers["location"] == "/dead?done=redriven&n=0"
        unproxied = {k: v for k, v in browser.items() if k != "X-Forwarded-Proto"}  # no scheme
        refused = client.post("dead/redrive", data=form, headers=unproxied, timeout=10)
        assert refused.status_code == 403
        assert "Origin 'https://ops.example.com'" in refused.text
        assert stopped(process)[0] == 0


@pytest.mark.parametrize(
    ("given", "complaint"),
    [
        ("ops.example.com:8443", "a host name without a port"),
        ("https://ops.example.com/", "must be a host name"),
        ("*", "not '*'"),
    ],
)
def test_a_wrong_allowed_host_is_a_usage_error(given: str, complaint: str) -> None:
    done = subprocess.run(
        [*CLI, "dashboard", "--allowed-host", given], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "--allowed-host" in done.stderr and complaint in done.stderr


def test_the_dashboard_command_says_when_actions_are_on(store_env: dict[str, str]) -> None:
    with running(store_env, "dashboard", "--port", "0", "--actions", "--hide-payloads") as (
        process,
        url,
        mode,
    ):
        assert mode == "actions on"
        assert '<span class="mode">actions on</span>' in httpx2.get(url, timeout=10).text
        assert stopped(process)[0] == 0


def test_a_taken_port_is_a_one_line_error(store_env: dict[str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = subprocess.run(
            [*CLI, "dashboard", "--port", port], capture_output=True, text=True, env=store_env
        )
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}: ")
    assert done.stderr.rstrip().endswith("pick another --port, or 0 for a free one")


def test_without_a_store_the_command_says_how_to_name_one(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "NO_COLOR": "1"}
    env |= {name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ}
    done = subprocess.run([*CLI, "dashboard"], capture_output=True, text=True, env=env)
    assert done.returncode == 2
    assert "No job store configured: pass --stack NAME" in done.stderr


def test_demo_dashboard_options_need_the_dashboard() -> None:
    done = subprocess.run([*CLI, "demo", "--memory", "--actions"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "--port and --actions are options of --dashboard." in done.stderr


def test_the_memory_demo_ends_by_serving_its_jobs(tmp_path: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "160"}
    with running(env, "demo", "--memory", "--dashboard", "--port", "0") as (process, url, mode):
        assert mode.startswith("read-only")
        overview = httpx2.get(url, timeout=10).text
        assert '<tr data-queue="default">' in overview
        dead = httpx2.get(f"{url}dead", timeout=10).text
        assert len(re.findall(r'<tr data-job-id="[0-9a-f]+">', dead)) >= 1
        code, _ = stopped(process)
    assert code == 0
