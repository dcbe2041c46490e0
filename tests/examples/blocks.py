"""The README's code blocks, as the tests read them: fenced text, its section and its marks.

A block is a fenced ```python, ```sh or ```console block (```json and ```text show output,
not code). A mark is an HTML comment right before a block, invisible on the rendered
page but visible to whoever edits the README beside the block it changes:

    <!-- example: not run: WHY -->       the block is not run (it is still checked: Python
                                        compiled, commands parsed by their own parsers)
    <!-- example: partly run: WHY -->    commands with a placeholder or a tool the project
                                        does not install are only checked; the rest run
    <!-- example: given: A, B -->        a fragment, run with these names (Python) or files
                                        (shell) supplied by ``tests/examples/given.py``
    <!-- example: free port: N -->       port N is replaced by a free one, so two runs at
                                        once (or a service of the machine) never collide

A README edit that leaves a mark before no block, or writes an unknown kind, fails the
accounting test rather than being ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# The pages whose blocks run: the README and the site's, not the changelog (a page that
# includes CHANGELOG.md, whose history shows no code to run).
PAGES = (README, *sorted(p for p in (ROOT / "docs").rglob("*.md") if p.name != "changelog.md"))
CODE = ("python", "sh", "console")
KINDS = ("not run", "partly run", "given", "free port")

_FENCE = re.compile(r"^```(\w*)\s*$")
_HEADING = re.compile(r"^(#{1,3}) (.+?)\s*$")
_MARK = re.compile(r"<!--\s*example:\s*(.*?)\s*-->", re.DOTALL)
_FILE = re.compile(r"^# ([\w/]+\.py)(?:\W.*)?$")
_SERVES = re.compile(r"^\s*await \w+\.run\(\)", re.MULTILINE)


@dataclass(frozen=True)
class Mark:
    kind: str  # one of KINDS, or what an unknown mark says (the accounting test names it)
    value: str
    line: int


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based, as an editor shows it
    lang: str
    text: str
    section: str  # "PAGE: HEADING", the unit a session runs
    marks: tuple[Mark, ...]
    page: str = "README.md"  # relative to the repository's root

    @property
    def name(self) -> str:
        """How tests and failures name it: its page, line and heading, which an editor finds."""
        return f"{self.page}:{self.line} ({self.section.partition(': ')[2]})"

    def mark(self, kind: str) -> Mark | None:
        return next((mark for mark in self.marks if mark.kind == kind), None)

    def given(self) -> tuple[str, ...]:
        """The names (or files) a fragment is run with; none for a whole program."""
        found = self.mark("given")
        return tuple(part.strip() for part in found.value.split(",")) if found else ()

    @property
    def not_run(self) -> bool:
        return self.mark("not run") is not None

    @property
    def file(self) -> str | None:
        """``app/jobs.py`` for a block that starts ``# app/jobs.py``: a module to write."""
        found = _FILE.match(self.text.partition("\n")[0])
        return found[1] if found and self.lang == "python" else None

    @property
    def serves(self) -> bool:
        """A Python program that runs a worker until a signal stops it."""
        return self.lang == "python" and bool(_SERVES.search(self.text))

    def ports(self) -> tuple[int, ...]:
        """The ports its ``free port`` marks name, which a run replaces by free ones."""
        return tuple(int(mark.value) for mark in self.marks if mark.kind == "free port")


@dataclass(frozen=True)
class Readme:
    blocks: tuple[Block, ...]
    stray_marks: tuple[Mark, ...]  # marks before no code block: an editing slip


@cache
def readme() -> Readme:
    """Every page parsed once per process; every test reads the same blocks."""
    parsed = [parse(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT))) for p in PAGES]
    return Readme(
        tuple(block for page in parsed for block in page.blocks),
        tuple(mark for page in parsed for mark in page.stray_marks),
    )


def parse(text: str, page: str = "README.md") -> Readme:
    """Blocks in order, each with the marks written right before it (blank lines allowed)."""
    lines = text.splitlines()
    marks_at = _marks_by_end_line(text)
    blocks: list[Block] = []
    used: set[int] = set()
    section = "(top)"
    index = 0
    while index < len(lines):
        line = lines[index]
        if heading := _HEADING.match(line):
            section = heading[2]
        fence = _FENCE.match(line)
        if not fence:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        if fence[1] in CODE:
            marks = _marks_before(lines, index, marks_at)
            used.update(id(mark) for mark in marks)
            body = "\n".join(lines[index + 1 : end]) + "\n"
            blocks.append(Block(index + 1, fence[1], body, f"{page}: {section}", marks, page))
        index = end + 1
    stray = tuple(m for ms in marks_at.values() for m in ms if id(m) not in used)
    return Readme(tuple(blocks), stray)


def _marks_by_end_line(text: str) -> dict[int, list[Mark]]:
    """Every mark, keyed by the 0-based line its comment ends on."""
    found: dict[int, list[Mark]] = {}
    for match in _MARK.finditer(text):
        kind, _, value = match[1].partition(":")
        line = text.count("\n", 0, match.start()) + 1
        end = text.count("\n", 0, match.end())
        mark = Mark(kind.strip(), " ".join(value.split()), line)
        found.setdefault(end, []).append(mark)
    return found


def _marks_before(
    lines: list[str], fence: int, marks_at: dict[int, list[Mark]]
) -> tuple[Mark, ...]:
    """The marks whose comments stand directly above line ``fence``, nearest last."""
    marks: list[Mark] = []
    index = fence - 1
    while index >= 0 and (not lines[index].strip() or index in marks_at):
        if index in marks_at:
            marks[:0] = marks_at[index]
            start = marks_at[index][0].line - 1
            index = start - 1
        else:
            index -= 1
    return tuple(marks)


def sections() -> dict[str, list[Block]]:
    """The code blocks of each section of each page, in order: what one session runs."""
    grouped: dict[str, list[Block]] = {}
    for block in readme().blocks:
        grouped.setdefault(block.section, []).append(block)
    return grouped
