"""The command line as an operator runs it: ``python -m sqsjobs.cli`` in a child process.

Two ways to set its environment. ``run_cli`` starts from this process's environment and
changes what a test names (the emulator's endpoint and credentials from the fixtures).
``run`` starts from nothing: ``clean_env`` keeps only ``PATH`` and points ``HOME`` at an
empty directory, so botocore finds no ``~/.aws`` config or credentials and no AWS
setting of the machine running the tests can leak in; a test adds exactly what it means
to give.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from .conftest import Env

CLI = [sys.executable, "-m", "sqsjobs.cli"]
# Dummy credentials and a region: what the emulator needs, and nothing else.
EMULATOR_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """No ``AWS_*`` or ``SQSJOBS_*`` variable, an empty ``HOME``, plain output; plus ``extra``."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "NO_COLOR": "1",
    } | extra


def run(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=env, timeout=timeout, check=False
    )


def run_cli(
    env: Env, *args: str, stdin: bytes | None = None, cwd: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``sqsjobs ARGS`` with ``env`` over this process's environment (``None`` unsets)."""
    merged = dict(os.environ)
    for name, value in env.items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = value
    merged["PYTHONIOENCODING"] = "utf-8"
    done = subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, timeout=120, env=merged, cwd=cwd
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def closed_port() -> int:
    """A loopback port nothing listens on: bound to learn a free one, then closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port
