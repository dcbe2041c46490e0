"""What ``sqsjobs`` loads to start: each command its own module, and ``--help`` none.

The root group lists its commands from ``sqsjobs.cli.COMMANDS`` (a name, where the
command is, its short help) and imports a command's module when that command runs. The
subprocesses below run under ``-X importtime``, whose report on stderr names the modules
imported (not one that ``importlib.import_module`` loads, as the group loads a command's
module, though it names what that module imports: ``loaded_after`` lists ``sys.modules``
for those). No timing is asserted (the machines running this are too noisy for that;
``bench/cli_startup.py`` measures it).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys

import click
import pytest

import sqsjobs.cli
from sqsjobs.cli import COMMANDS, SqsJobsGroup

# The commands the root group had before they were loaded lazily.
REGISTERED = {
    "dashboard",
    "demo",
    "dlq",
    "emulator",
    "enqueue",
    "infra",
    "jobs",
    "queues",
    "reconcile",
    "records",
    "stats",
    "worker",
    "workers",
}
# What neither ``--help`` nor ``--version`` may import (a module or any module under it).
HEAVY = ("boto3", "botocore", "rich.table", "aioboto3", "starlette", "croniter", "pydantic")
IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \| *(\S+)$", re.M)
WIDTHS = (60, 80, 120, 200)


def run(*args: str, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    """``python -m sqsjobs ARGS`` in a child process, 80 columns wide."""
    flags = ["-X", "importtime"] if importtime else []
    env = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, *flags, "-m", "sqsjobs", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def loaded_after(*args: str) -> set[str]:
    """The modules in ``sys.modules`` when ``sqsjobs ARGS`` ends (the console script's path)."""
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(*sorted(sys.modules), sep='\\n', file=sys.stderr))\n"
        "from sqsjobs.__main__ import main\n"
        "sys.exit(main())\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    return set(completed.stderr.split())


def imported(report: str) -> set[str]:
    return set(IMPORT_LINE.findall(report))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(f"{h}.") for h in HEAVY))


def top_level_commands() -> dict[str, click.Command]:
    """Every click command defined in ``sqsjobs.cli``'s modules that no group contains."""
    found: dict[int, click.Command] = {}
    for module in pkgutil.iter_modules(sqsjobs.cli.__path__):
        if module.name == "__main__":  # runs the command line when imported
            continue
        loaded = importlib.import_module(f"sqsjobs.cli.{module.name}")
        found |= {id(v): v for v in vars(loaded).values() if isinstance(v, click.Command)}
    found.pop(id(sqsjobs.cli.main), None)
    contained = {
        id(sub)
        for cmd in found.values()
        if isinstance(cmd, click.Group)
        for sub in cmd.commands.values()
    }
    return {cmd.name or "": cmd for key, cmd in found.items() if key not in contained}


def commands_section(group: click.Group, width: int) -> str:
    formatter = click.HelpFormatter(width=width)
    group.format_commands(click.Context(group, info_name="sqsjobs"), formatter)
    return formatter.getvalue()


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_and_version_import_no_aws_sdk_table_or_model(args: list[str]) -> None:
    completed = run(*args, importtime=True)
    assert completed.returncode == 0, completed.stderr
    modules = imported(completed.stderr)
    assert "sqsjobs.cli" in modules  # the report was read
    assert heavy(modules) == []


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_and_version_load_no_command_module(args: list[str]) -> None:
    modules = loaded_after(*args)
    assert "sqsjobs.cli" in modules
    assert heavy(modules) == []
    assert sorted(m for m in modules if m.startswith("sqsjobs.cli.")) == []


def test_a_command_loads_its_own_module_and_not_the_others() -> None:
    modules = {m.removeprefix("sqsjobs.cli.") for m in loaded_after("jobs", "--help")}
    assert "_jobs" in modules
    others = {"_dashboard", "_demo", "_dlq", "_enqueue", "_infra", "_local", "_worker"}
    assert sorted(others & modules) == []


def test_the_lazy_mapping_names_every_command_registered_before() -> None:
    assert set(COMMANDS) == REGISTERED


def test_the_lazy_mapping_names_every_top_level_command_the_modules_define() -> None:
    defined = top_level_commands()
    assert set(defined) == set(COMMANDS)
    for name, entry in COMMANDS.items():
        assert entry.load() is defined[name], name


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_short_help_is_its_command_s_own(name: str) -> None:
    entry = COMMANDS[name]
    command = entry.load()
    assert entry.help == command.get_short_help_str(limit=10_000)
    # The stand-in ``--help`` lists is shortened as the command's help is, at any width.
    stand_in = click.Command(name, help=entry.help)
    for limit in range(10, 121):
        assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), limit


@pytest.mark.parametrize("width", WIDTHS)
def test_the_help_lists_the_commands_as_the_loaded_commands_would(width: int) -> None:
    lazy = SqsJobsGroup(name="sqsjobs", lazy=COMMANDS)  # loads nothing yet
    eager = click.Group(name="sqsjobs", commands={n: e.load() for n, e in COMMANDS.items()})
    assert commands_section(lazy, width) == commands_section(eager, width)
    assert lazy.commands == {}


def test_sqsjobs_help_lists_every_command_with_its_short_help() -> None:
    completed = run("--help")
    assert completed.returncode == 0, completed.stderr
    eager = click.Group(name="sqsjobs", commands={n: e.load() for n, e in COMMANDS.items()})
    listed = completed.stdout.partition("Commands:\n")[2]
    assert listed == commands_section(eager, 78).partition("Commands:\n")[2]  # 80 columns
    assert [line.split()[0] for line in listed.splitlines()] == sorted(REGISTERED)


def test_sqsjobs_version() -> None:
    completed = run("--version")
    assert (completed.returncode, completed.stdout) == (
        0,
        f"sqsjobs, version {sqsjobs.__version__}\n",
    )


def test_a_subgroup_s_help_lists_its_commands_and_debug() -> None:
    completed = run("jobs", "--help")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("Usage: sqsjobs jobs [OPTIONS] COMMAND [ARGS]...")
    assert "--debug" in completed.stdout
    for name in ("list", "show", "cancel", "retry"):
        assert re.search(rf"^  {name} ", completed.stdout, re.M), name


def test_debug_after_a_lazily_loaded_command_is_accepted() -> None:
    completed = run("jobs", "show", "--debug", "--help")
    assert completed.returncode == 0, completed.stderr
    assert "--debug" in completed.stdout


def test_the_emulator_still_has_no_debug_option() -> None:
    completed = run("emulator", "--debug")
    assert completed.returncode == 2
    assert "No such option" in completed.stderr and "--debug" in completed.stderr


@pytest.mark.skipif(not hasattr(click, "NoSuchCommand"), reason="click < 8.4 suggests none")
def test_an_unknown_command_still_gets_a_suggestion() -> None:
    completed = run("job")
    assert completed.returncode == 2
    assert "No such command 'job'. Did you mean 'jobs'?" in completed.stderr
