"""Rules of the package, its tests and benchmarks that no linter checks for us."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqsjobs

PACKAGE = Path(sqsjobs.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))
ROOT = PACKAGE.parent.parent
FORMATTED = MODULES + sorted((ROOT / "tests").rglob("*.py")) + sorted((ROOT / "bench").glob("*.py"))
DIRECTIVE = "fmt: " + "skip"  # spelled apart, so this file does not match itself
MAX_LINES = 400


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_module_is_over_400_lines(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize("path", FORMATTED, ids=lambda path: str(path.relative_to(ROOT)))
def test_the_formatter_formats_every_line(path: Path) -> None:
    assert DIRECTIVE not in path.read_text(encoding="utf-8")


def test_the_memory_store_is_importable_from_the_package_root() -> None:
    from sqsjobs.memory.store import MemoryJobStore

    assert sqsjobs.MemoryJobStore is MemoryJobStore
    assert MemoryJobStore.__module__ == "sqsjobs.memory.store"
