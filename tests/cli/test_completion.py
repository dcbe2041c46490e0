"""Shell completion, as README tells an operator to turn it on: click's scripts, per shell."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("sqsjobs")
FUNCTION = {"bash": "_sqsjobs_completion()", "zsh": "#compdef sqsjobs", "fish": "function "}


def sqsjobs(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT)], capture_output=True, text=True, timeout=60, env={**os.environ, **env}
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_completion_script_is_printed_for_each_shell(shell: str) -> None:
    result = sqsjobs(_SQSJOBS_COMPLETE=f"{shell}_source")
    assert result.returncode == 0, result.stderr
    assert FUNCTION[shell] in result.stdout
    assert "_SQSJOBS_COMPLETE=" in result.stdout  # it calls back into the command


def test_completion_offers_the_commands_and_their_subcommands() -> None:
    top = sqsjobs(_SQSJOBS_COMPLETE="bash_complete", COMP_WORDS="sqsjobs dl", COMP_CWORD="1")
    assert top.stdout.split() == ["plain,dlq"]
    sub = sqsjobs(_SQSJOBS_COMPLETE="bash_complete", COMP_WORDS="sqsjobs dlq ", COMP_CWORD="2")
    assert sub.stdout.split() == ["plain,list", "plain,redrive"]
