"""cfn-lint passes every shipped template with nothing to say, informational notes included.

cfn-lint exits with a bit mask (2 errors, 4 warnings, 8 informational), so exit code 0
with empty output is the only clean result. It runs offline.
"""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from sqsjobs.infra import TEMPLATES

CFN_LINT = Path(sys.executable).parent / "cfn-lint"
PACKAGE = resources.files("sqsjobs.infra")


@pytest.mark.parametrize("name", TEMPLATES)
def test_cfn_lint_is_silent(name: str) -> None:
    path = Path(str(PACKAGE.joinpath(f"{name}.yaml")))
    done = subprocess.run(
        [str(CFN_LINT), "--format", "parseable", "--include-checks", "I", "--", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_every_template_file_is_listed() -> None:
    files = {p.name for p in PACKAGE.iterdir() if p.name.endswith(".yaml")}
    assert files == {f"{name}.yaml" for name in TEMPLATES}


def test_the_repository_infra_directory_is_the_package() -> None:
    infra = Path(__file__).resolve().parents[2] / "infra"
    assert infra.is_symlink()
    assert infra.resolve() == Path(str(PACKAGE)).resolve()
