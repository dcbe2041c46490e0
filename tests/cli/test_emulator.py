"""``sqsjobs emulator`` and ``sqsjobs demo --keep``: a local AWS that other shells use.

Each test runs the command as an operator does, as its own process, reads the lines it
prints to paste, and runs other ``sqsjobs`` commands in another process with exactly
that environment (and no other AWS configuration), then stops it with SIGTERM.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import boto3
import pytest
from click.testing import CliRunner

from sqsjobs import JobConfigError
from sqsjobs.cli import main
from sqsjobs.testing import local_aws

CLI = [sys.executable, "-m", "sqsjobs.cli"]
# Stopping the emulator is prompt: a few seconds at most, even on a busy machine.
STOP_TIMEOUT = 5.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def plain_env() -> dict[str, str]:
    """This environment without any AWS or sqsjobs configuration: only what is pasted."""
    kept = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AWS_", "SQSJOBS_")) and key != "FORCE_COLOR"
    }
    return {**kept, "COLUMNS": "160", "NO_COLOR": "1"}


@dataclass
class Running:
    """A command's process whose stdout is read line by line on a thread."""

    process: subprocess.Popen[str]
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    seen: list[str] = field(default_factory=list)

    def read_until(self, text: str, timeout: float) -> list[str]:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.seen):
            remaining = deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(remaining, 0.01))
            except queue.Empty:
                raise AssertionError(f"no {text!r} within {timeout}s; got {self.seen}") from None
            if line is None:
                raise AssertionError(f"exited before {text!r}; got {self.seen}")
            self.seen.append(line)
        return self.seen

    def pasted_environment(self) -> dict[str, str]:
        """What a shell has after pasting the ``export`` lines (and the ``unset`` line)."""
        env = plain_env()
        for line in self.seen:
            words = shlex.split(line)
            if words[:1] == ["export"]:
                name, _, value = words[1].partition("=")
                env[name] = value
        return env


@contextmanager
def running(*args: str) -> Iterator[Running]:
    process = subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=plain_env()
    )
    run = Running(process)

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            run.lines.put(line.rstrip("\n"))
        run.lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        yield run
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def sqsjobs(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=60)


def stop_with_sigterm(run: Running) -> int:
    """SIGTERM, and the exit code once it has stopped (a hang fails at the timeout)."""
    run.process.send_signal(signal.SIGTERM)
    return run.process.wait(timeout=STOP_TIMEOUT)


def test_local_aws_serves_on_the_port_it_is_given() -> None:
    port = free_port()
    with local_aws(port=port) as endpoint:
        assert endpoint == f"http://127.0.0.1:{port}"
        sqs = boto3.client(
            "sqs",
            endpoint_url=endpoint,
            region_name="eu-west-3",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        url = sqs.create_queue(QueueName="rapports-nuit-1796094741")["QueueUrl"]
        assert url.endswith("/rapports-nuit-1796094741")


def test_local_aws_refuses_a_taken_port_at_once() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=f"127.0.0.1:{port}"), local_aws(port=port):
            pass


@pytest.mark.parametrize("port", [-1, 65536, 8080.5, True])
def test_local_aws_rejects_a_port_that_is_not_one(port: object) -> None:
    with pytest.raises(JobConfigError, match="port must be") as raised, local_aws(port=port):  # type: ignore[arg-type]
        pass
    assert raised.value.code == "invalid_option"


def test_emulator_serves_a_deployed_stack_to_the_other_commands() -> None:
    port = free_port()
    with running("emulator", "--port", str(port), "--stack", "boutique-nuit") as emulator:
        emulator.read_until("Press Ctrl-C", timeout=60)
        env = emulator.pasted_environment()
        assert env["AWS_ENDPOINT_URL"] == f"http://127.0.0.1:{port}"
        assert env["AWS_REGION"] == env["AWS_DEFAULT_REGION"] == "us-east-1"
        assert env["SQSJOBS_STACK"] == "boutique-nuit"
        assert env["AWS_ACCESS_KEY_ID"] and env["AWS_SECRET_ACCESS_KEY"]

        payload = json.dumps({"commande": "Ø-1796094741.2439704", "client": "Zoë"})
        enqueued = sqsjobs(env, "enqueue", "emails.bienvenue", "--payload", payload)
        assert enqueued.returncode == 0, enqueued.stderr
        listed = sqsjobs(env, "jobs", "list")
        assert listed.returncode == 0, listed.stderr
        assert "emails.bienvenue" in listed.stdout
        stats = sqsjobs(env, "stats")
        assert stats.returncode == 0, stats.stderr
        assert "default" in stats.stdout

        code = stop_with_sigterm(emulator)
    assert code == 0, emulator.process.stderr.read() if emulator.process.stderr else ""
    assert emulator.read_until("Emulator stopped.", timeout=1)[-1] == "Emulator stopped."


def test_emulator_without_a_stack_prints_no_stack_and_stops_on_sigint() -> None:
    with running("emulator") as emulator:
        lines = emulator.read_until("Press Ctrl-C", timeout=60)
        assert not any("SQSJOBS_STACK" in line for line in lines)
        env = emulator.pasted_environment()
        sqs = subprocess.run(
            [sys.executable, "-c", "import boto3; print(boto3.client('sqs').list_queues())"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert sqs.returncode == 0, sqs.stderr
        emulator.process.send_signal(signal.SIGINT)
        assert emulator.process.wait(timeout=STOP_TIMEOUT) == 0


def test_emulator_on_a_taken_port_fails_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        completed = sqsjobs(plain_env(), "emulator", "--port", str(port))
    assert completed.returncode == 1
    assert completed.stderr.splitlines() == [
        f"error: Cannot serve on 127.0.0.1:{port}: Address already in use; "
        "pick another --port, or 0 for a free one"
    ]


def test_demo_keep_with_memory_is_bad_usage() -> None:
    result = CliRunner().invoke(main, ["demo", "--memory", "--keep"])
    assert result.exit_code == 2
    assert "--keep" in result.output and "--memory" in result.output


@pytest.mark.slow
def test_demo_keep_leaves_its_jobs_inspectable_until_sigterm() -> None:
    with running("demo", "--keep") as demo:
        demo.read_until("Press Ctrl-C", timeout=120)
        env = demo.pasted_environment()
        assert env["SQSJOBS_STACK"].startswith("sqsjobs-demo-")
        assert any(env["SQSJOBS_STACK"] in line for line in demo.seen[:20])
        listed = sqsjobs(env, "jobs", "list", "--status", "dead")
        assert listed.returncode == 0, listed.stderr
        # The job with no handler dead-lettered; the report that succeeded on its third
        # attempt is not among the dead.
        assert "legacy.export" in listed.stdout
        assert "report.build" not in listed.stdout
        stats = sqsjobs(env, "stats")
        assert stats.returncode == 0, stats.stderr

        code = stop_with_sigterm(demo)
    assert code == 0
