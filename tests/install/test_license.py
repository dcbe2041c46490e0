"""The licence travels with every distribution: the wheel and the sdist carry LICENSE.

Some companies' package policies refuse a wheel without its licence text. The build
backend (hatchling) is called in-process, through the hooks a build front end calls, so
this runs in a second; ``test_wheel.py`` checks the wheel pip builds in isolation too.
"""

from __future__ import annotations

import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LICENSE = (ROOT / "LICENSE").read_text()


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the hooks build the project in the working directory


def wheel_licence(wheel: Path) -> tuple[str, str]:
    """The wheel's LICENSE text and its metadata's licence expression."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [licence] = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
        fields = Parser().parsestr(archive.read(metadata).decode())
        return archive.read(licence).decode(), fields["License-Expression"]


def test_the_license_is_mit_as_pyproject_says() -> None:
    assert LICENSE.startswith("MIT License\n")
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text()


def test_the_wheel_carries_the_license(in_root: None, tmp_path: Path) -> None:
    from hatchling.build import build_wheel

    text, expression = wheel_licence(tmp_path / build_wheel(str(tmp_path)))
    assert (text, expression) == (LICENSE, "MIT")


def test_the_sdist_carries_the_license(in_root: None, tmp_path: Path) -> None:
    from hatchling.build import build_sdist

    with tarfile.open(tmp_path / build_sdist(str(tmp_path))) as archive:
        [member] = [m for m in archive.getmembers() if m.name.endswith("/LICENSE")]
        assert member.name.count("/") == 1  # at the top, beside pyproject.toml
        extracted = archive.extractfile(member)
        assert extracted is not None
        assert extracted.read().decode() == LICENSE
