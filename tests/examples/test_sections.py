"""Every other section of the README, its blocks run in order in one session each.

A section whose blocks are all Python runs in the fast tier (a second or so a block); one
that runs ``sqsjobs`` commands starts a process per command, and one of them an emulator
and a worker, so those are marked ``slow`` and run by ``--all`` and CI.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .blocks import Block, sections
from .session import Session
from .test_quickstart import SECTION as QUICK_START


def runs(block: Block) -> bool:
    """Whether some of the block runs (the accounting test holds the rest to its marks)."""
    if block.not_run:
        return False
    return block.lang == "python" or bool(Session.runnable(block))


def _section(name: str) -> object:
    blocks = sections()[name]
    shell = any(runs(block) and block.lang != "python" for block in blocks)
    return pytest.param(name, id=name, marks=[pytest.mark.slow] if shell else [])


SECTIONS = [
    _section(name)
    for name, blocks in sections().items()
    if name != QUICK_START and any(runs(block) for block in blocks)
]


@pytest.mark.parametrize("section", SECTIONS)
def test_the_section_runs_as_written(section: str, session: Callable[[], Session]) -> None:
    run = session()
    for block in sections()[section]:
        run.run(block)
