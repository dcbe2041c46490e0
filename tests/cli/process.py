"""The command line as an operator runs it: a real process with an environment built from
nothing, so no AWS setting of the machine running the tests can leak in.

``clean_env`` keeps only ``PATH`` and points ``HOME`` at an empty directory, so botocore
finds no ``~/.aws`` config or credentials; a test adds exactly what it means to give.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

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


def closed_port() -> int:
    """A loopback port nothing listens on: bound to learn a free one, then closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port
