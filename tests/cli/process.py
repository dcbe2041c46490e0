"""The command line as an operator runs it: ``python -m sqsjobs.cli`` in a child process."""

from __future__ import annotations

import os
import subprocess
import sys

from .conftest import Env


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
        [sys.executable, "-m", "sqsjobs.cli", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        env=merged,
        cwd=cwd,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )
