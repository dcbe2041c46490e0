"""Install tests: what each install (base, ``[worker]``) can import and run.

``run_without`` runs a script in this environment as if some packages were not installed
(``sys.modules[name] = None`` makes importing them fail like a missing package), which
is fast; ``test_wheel.py`` proves the same on a built wheel in fresh environments.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.aws.emulator import ENVIRONMENT, shared_endpoint

ROOT = Path(__file__).resolve().parents[2]
# What the ``worker`` and ``local`` extras add; a base install has none of them.
WORKER_PACKAGES = ("aiobotocore", "aiohttp", "click", "rich", "croniter")
LOCAL_PACKAGES = ("moto",)
EXTRA_HINT = "pip install 'sqsjobs[worker]'"


@pytest.fixture(scope="session")
def aws_endpoint(pytestconfig: pytest.Config) -> str:
    return shared_endpoint(pytestconfig)


def run_without(
    missing: Sequence[str], script: str, *, python: str = sys.executable
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with ``python``, the modules in ``missing`` failing to import."""
    blocked = "".join(f"sys.modules[{name!r}] = None\n" for name in missing)
    return subprocess.run(
        [python, "-c", f"import sys\n{blocked}{script}"],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_environment(),
    )


def child_environment() -> dict[str, str]:
    """The emulator's dummy credentials, and no inherited virtual environment."""
    inherited = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    return {**inherited, **ENVIRONMENT}


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this tree, built once for every fresh environment."""
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=240,
        env=child_environment(),
    )
    assert built.returncode == 0, built.stderr
    [found] = out.glob("sqsjobs-*.whl")
    return found
