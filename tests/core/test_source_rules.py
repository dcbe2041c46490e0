"""Rules of the core package and the command line that no linter checks for us."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqsjobs

PACKAGE = Path(sqsjobs.__file__).parent
MODULES = sorted(
    path for pattern in ("*.py", "cli/*.py", "contrib/*.py") for path in PACKAGE.glob(pattern)
)
MAX_LINES = 400


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_module_is_over_400_lines(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_the_formatter_formats_every_line(path: Path) -> None:
    assert "fmt: skip" not in path.read_text(encoding="utf-8")


def test_the_memory_store_is_importable_from_the_package_root() -> None:
    from sqsjobs._memory import MemoryJobStore

    assert sqsjobs.MemoryJobStore is MemoryJobStore
    assert MemoryJobStore.__module__ == "sqsjobs._memory"
