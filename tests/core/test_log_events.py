"""Every log event of the core, the CLI and contrib is an ``Event`` member, never a literal.

A literal ``"jobs.retyr"`` would log an event nobody filters on; through the enum the
same typo is a mypy error. The AWS store's events are the enum's too (its members exist).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sqsjobs
from sqsjobs.observe.log import EVENT_PREFIX, Event

PACKAGE = Path(sqsjobs.__file__).parent
MODULES = sorted(
    path
    for path in PACKAGE.rglob("*.py")
    if path.relative_to(PACKAGE).parts[0] != "aws" and path != PACKAGE / "observe" / "log.py"
)


def event_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith("jobs.")
        and not node.value.endswith(".html")  # the dashboard's page templates
    ]


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_module_writes_an_event_name_by_hand(path: Path) -> None:
    assert event_literals(path) == []


def test_the_scan_sees_the_modules_that_log() -> None:
    names = {str(path.relative_to(PACKAGE)) for path in MODULES}
    logging = {"worker/job_worker.py", "worker/run.py", "memory/store.py", "cli/_worker.py"}
    assert logging | {"contrib/asgi.py", "contrib/dashboard/_app.py"} <= names


def test_event_names_are_distinct_and_namespaced() -> None:
    values = [event.value for event in Event]
    assert len(set(values)) == len(values)
    assert all(value.startswith(EVENT_PREFIX) for value in values)
    assert {"jobs.malformed_message", "jobs.unknown_job"} <= set(values)
