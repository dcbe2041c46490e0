"""The release's version is written once, and CHANGELOG.md says how to upgrade to it."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

from click.testing import CliRunner

import sqsjobs
from sqsjobs.cli import main as cli
from tests.upgrade.previous import RELEASE

CHANGELOG = Path(__file__).resolve().parents[1] / "CHANGELOG.md"


def releases() -> dict[str, str]:
    """Each release's section of the changelog, by version."""
    parts = re.split(r"^## (\d+\.\d+\.\d+) — \d{4}-\d{2}-\d{2}$", CHANGELOG.read_text(), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_package_the_distribution_and_the_command_agree_on_the_version() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", sqsjobs.__version__)
    assert version("sqsjobs") == sqsjobs.__version__
    shown = CliRunner().invoke(cli, ["--version"])
    assert shown.exit_code == 0 and sqsjobs.__version__ in shown.output


def test_every_release_has_an_upgrading_note_and_this_one_comes_first() -> None:
    found = releases()
    assert next(iter(found)) == sqsjobs.__version__
    assert RELEASE in found  # the release tests/upgrade runs beside this one
    for number, text in found.items():
        assert re.search(r"^### Upgrading", text, flags=re.M), f"{number} has no Upgrading note"
    assert f"### Upgrading from {RELEASE[:3]}" in found[sqsjobs.__version__]
