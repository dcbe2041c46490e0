"""Ending a test's child process whatever happened: killed if it still runs, reaped, its
pipes closed, so no ``ResourceWarning`` surfaces later in another test's code."""

from __future__ import annotations

import contextlib
import subprocess
from typing import Any


def ended(process: subprocess.Popen[Any]) -> None:
    """Kill ``process`` if it still runs; wait for it and close its pipes."""
    if process.poll() is None:
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=30)
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()
