"""checkov finds nothing to fail in either shipped template.

Any deliberate exception must be suppressed in the resource's own metadata
(``Metadata: checkov: skip: [{id: ..., comment: ...}]``) with its reason. checkov runs
offline: ``--skip-download`` stops it fetching guidelines and policies from its vendor's
platform, so it reads nothing but the template.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from sqsjobs.infra import TEMPLATES

from .support import load_template

pytestmark = pytest.mark.slow  # checkov as a process, seconds per template

CHECKOV = Path(sys.executable).parent / "checkov"
PACKAGE = resources.files("sqsjobs.infra")


def checkov(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [
            str(CHECKOV),
            "--skip-download",
            "--framework",
            "cloudformation",
            "--output",
            "json",
            "--file",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: failed checks, reported below
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("name", TEMPLATES)
def test_checkov_fails_nothing(name: str) -> None:
    report = checkov(Path(str(PACKAGE.joinpath(f"{name}.yaml"))))
    assert report["check_type"] == "cloudformation"
    summary, results = report["summary"], report["results"]
    failed = [(c["check_id"], c["resource"], c["check_name"]) for c in results["failed_checks"]]
    assert failed == []
    assert summary["parsing_errors"] == 0
    # Every resource was read, and checked by something.
    assert summary["resource_count"] == len(load_template(name)["Resources"])
    assert summary["passed"] > 0
    for skipped in results["skipped_checks"]:
        assert skipped["check_result"].get("suppress_comment"), skipped["check_id"]
