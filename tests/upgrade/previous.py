"""Earlier releases, built from this repository's history, to run beside this one.

``PREVIOUS`` is the commit released as 0.1.0 (CHANGELOG.md), ``PREVIOUS_0_2`` the one
released as 0.2.0, the release before this one. Their ``src`` trees are extracted once
per test session with ``git archive`` and run in subprocesses with ``PYTHONPATH``
pointing at them, on this environment's dependencies (both declared these ranges). A
clone without that history cannot run the upgrade suite, and says so: the suite fails
rather than skips, since it is what guards every rolling deploy.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

RELEASE = "0.1.0"
PREVIOUS = "0362eb33ba476244d261a2cec3ee4c915de357c1"
# The release before this one: the last commit whose changelog's newest entry is 0.2.0.
RELEASE_0_2 = "0.2.0"
PREVIOUS_0_2 = "dd2e6bbfd7fb6f9ee13bfc6c4797812d605eeba9"
ROOT = Path(__file__).resolve().parents[2]
OLD_SIDE = Path(__file__).with_name("old_side.py")


def git(*argv: str) -> bytes:
    try:
        done = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", b"") or b""
        raise RuntimeError(
            f"tests/upgrade needs the git history holding release {RELEASE} ({PREVIOUS}); "
            f"`git {' '.join(argv)}` failed: {detail.decode(errors='replace').strip() or error}"
            " (clone without --depth)"
        ) from error
    return done.stdout


def extract(into: Path, commit: str = PREVIOUS) -> Path:
    """A release's ``src`` directory (0.1.0's unless ``commit`` says), extracted under ``into``."""
    archive = git("archive", "--format=tar", commit, "src")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    src = into / "src"
    assert (src / "sqsjobs" / "__init__.py").exists()
    return src


def previous_file(path: str) -> str:
    """A file of the previous release, e.g. its CloudFormation template."""
    return git("show", f"{PREVIOUS}:{path}").decode()


class OldRelease:
    """Runs ``old_side.py`` commands on the previous release's code, in a subprocess."""

    def __init__(self, src: Path, endpoint: str) -> None:
        self.src = src
        self.endpoint = endpoint

    def environment(self) -> dict[str, str]:
        env = {**os.environ, "PYTHONPATH": str(self.src), "PYTHONDONTWRITEBYTECODE": "1"}
        env["AWS_ENDPOINT_URL"] = self.endpoint
        return env

    def run(self, command: str, config: dict[str, Any], timeout: float = 120.0) -> Any:
        """Run one command to its end; its JSON answer."""
        import json

        done = subprocess.run(
            [sys.executable, str(OLD_SIDE), command, json.dumps(config)],
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(f"old {command} failed ({done.returncode}):\n{done.stderr}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    def start(self, command: str, config: dict[str, Any]) -> subprocess.Popen[str]:
        """Start a long-running command (a worker); stop it with ``stop``."""
        import json

        return subprocess.Popen(
            [sys.executable, str(OLD_SIDE), command, json.dumps(config)],
            env=self.environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
