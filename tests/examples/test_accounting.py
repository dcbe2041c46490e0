"""Every code block of the README and the site's pages is run, or says on its page why
not; and what cannot run is still checked.

The run tests (``test_quickstart``, ``test_sections``) take every section's blocks; this
file holds the README to its marks (``tests/examples/blocks.py``): a block that would be
left out, or a command that would be skipped, without a mark saying why fails here, and
so does a mark that no longer fits its block. The marks are counted, so that a new
"not run" is a decision someone makes here, not a way to quieten a failing block.
Then the checks that need no emulator: Python compiles, each command passes its own
parser (``commands.problems``), and a job record the README shows has a record's fields.
"""

from __future__ import annotations

import ast
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sqsjobs import JobQueue, MemoryJobStore

from .blocks import KINDS, PAGES, Block, readme, sections
from .commands import Command, commands, inline_mentions, problems
from .given import FILES, NAMES
from .test_quickstart import SECTION as QUICK_START
from .test_sections import SECTIONS, runs

# The blocks the tests leave out whole, and those they run in part: each has its reason
# on its page. Raise these only with a reason a reader would accept. 14 of the not run
# are the benchmarks' commands (minutes each, their figures on the page beside them).
NOT_RUN = 38
PARTLY_RUN = 4

BLOCKS = readme().blocks
SHELL = [block for block in BLOCKS if block.lang != "python"]


def _id(block: Block) -> str:
    return f"{block.page}:{block.line}"


def test_every_mark_is_known_and_stands_before_a_block() -> None:
    assert readme().stray_marks == (), "an example: mark stands before no code block"
    for block in BLOCKS:
        kinds = [mark.kind for mark in block.marks]
        assert set(kinds) <= set(KINDS), f"{block.name}: unknown mark in {kinds}"
        assert all(mark.value for mark in block.marks), f"{block.name}: a mark says nothing"
        assert not {"not run", "partly run"} <= set(kinds), f"{block.name}: not run, or partly?"
        known = NAMES if block.lang == "python" else FILES
        unknown = [name for name in block.given() if name not in known]
        assert not unknown, f"{block.name}: tests/examples/given.py has no {unknown}"
        for port in block.ports():
            assert str(port) in block.text, f"{block.name}: port {port} is not in the block"


@pytest.mark.parametrize("block", SHELL, ids=_id)
def test_a_shell_block_skips_no_command_its_marks_do_not_explain(block: Block) -> None:
    skipped = [c.text for c in commands(block) if c.unrunnable() is not None]
    ran = [c.text for c in commands(block) if c.unrunnable() is None]
    if block.not_run:
        return
    if block.mark("partly run"):
        assert skipped, f"{block.name} is marked partly run, but all of it runs: drop the mark"
        assert ran, f"{block.name} is marked partly run, but none of it runs: not run, then"
    else:
        reasons = [f"{c.text!r} {c.unrunnable()}" for c in commands(block) if c.unrunnable()]
        assert not skipped, f"{block.name} would skip {reasons}: change it, or mark it"


def test_the_run_tests_take_every_block_that_runs_and_the_marks_are_counted() -> None:
    ran = {name for name in sections() if any(runs(block) for block in sections()[name])}
    taken = {QUICK_START} | {param.values[0] for param in SECTIONS}  # type: ignore[attr-defined]
    assert ran <= taken, f"sections no test runs: {ran - taken}"
    left_out = [block.name for block in BLOCKS if not runs(block)]
    marked = [block.name for block in BLOCKS if block.not_run]
    assert left_out == marked, "a block is left out without a 'not run' mark"
    partly = [block.name for block in BLOCKS if block.mark("partly run")]
    assert (len(marked), len(partly)) == (NOT_RUN, PARTLY_RUN), (
        "the marks changed: update NOT_RUN and PARTLY_RUN if the page says why",
        marked,
        partly,
    )


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang == "python"], ids=_id)
def test_a_python_block_compiles(block: Block) -> None:
    compile(block.text, block.name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.fixture
def reader_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A reader's directory for parsing commands in this process: the README's ``app``
    package (``sqsjobs worker app.jobs:registry`` imports it to parse), the files the
    marks give, and a JSON payload on stdin (``--payload -``)."""
    for block in BLOCKS:
        if block.file:
            (tmp_path / block.file).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / block.file).write_text(block.text)
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"month": "2026-11"}')))
    yield tmp_path
    for module in [name for name in sys.modules if name == "app" or name.startswith("app.")]:
        del sys.modules[module]


CHECKED = [
    pytest.param(command, id=f"{_id(block)}: {command.text[:40]}")
    for block in SHELL
    for command in commands(block)
] + [
    pytest.param(c, id=f"prose of {page.name}: {c.text}")
    for page in PAGES
    for c in inline_mentions(page.read_text(encoding="utf-8"))
]


@pytest.mark.parametrize("command", CHECKED)
def test_a_command_passes_its_checks(command: Command, reader_directory: Path) -> None:
    assert problems(command) == []


async def test_a_job_record_the_readme_shows_has_the_fields_of_one() -> None:
    job = (await JobQueue(MemoryJobStore()).enqueue("report.build", {}, tenant="acme")).job
    fields = list(job.model_dump(mode="json"))
    shown = [
        record
        for block in SHELL
        for command in commands(block)
        for record in _records("\n".join(command.output))
    ]
    assert shown, "the README shows no job record any more: drop this test"
    for record in shown:
        assert list(record) == fields


def _records(text: str) -> list[dict[str, object]]:
    """The job records in a command's shown output (JSON with an ``id`` and a ``status``)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return []
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict) and {"id", "status"} <= set(item)]
