"""The commands of the README's shell blocks: what each says, whether it can run here, and
the checks that hold whether it runs or not.

A command runs here when every stage of it is ``sqsjobs`` with no placeholder (``ID``, an
``arn:...`` or ``<words>`` stand for values of the reader's): ``pip`` needs the network,
``jq`` and the AWS CLI are not among the test dependencies, ``python3 dev.py`` would
install and run this suite. Such a command is still checked
(``problems``), so a README edit that breaks it fails even where it cannot run: a
``sqsjobs`` command must get past the command line's own parser, an extra must be one
``pyproject.toml`` declares, a ``dev.py`` command one that ``dev.py`` has.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from types import ModuleType

import click
from click.shell_completion import get_completion_class

from .blocks import ROOT, Block

PLACEHOLDER = "PLACEHOLDER"
SERVERS = (["sqsjobs", "worker"], ["sqsjobs", "emulator"], ["sqsjobs", "dashboard"])
_WORDS_PLACEHOLDER = re.compile(r"<[^<>\n]*\s[^<>\n]*>")  # <the app stack's TableName output>
_OPERATORS = {"|", "||", "&&", ";"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_EXTRAS = re.compile(r"^(?:sqsjobs|\.)\[([\w,-]+)\]$")
_COMPLETE = re.compile(r"\b(_[A-Z_]+_COMPLETE)=(\w+)_source\b")


@dataclass(frozen=True)
class Command:
    text: str  # as bash runs it: with its continuation lines and comments
    output: tuple[str, ...]  # the lines a console block shows after it

    def stages(self) -> list[list[str]]:
        """Its pipeline stages as words, variable assignments and redirections left out."""
        stages: list[list[str]] = [[]]
        words = iter(_words(self.text))
        for word in words:
            if word in _OPERATORS:
                stages.append([])
            elif word in (">", ">>") or word.startswith((">", "2>")):
                if word in (">", ">>"):
                    next(words, None)
            elif stages[-1] or not _ASSIGNMENT.match(word):
                stages[-1].append(word)
        return [stage for stage in stages if stage]

    def unrunnable(self) -> str | None:
        """Why this command cannot run here as written, or ``None`` when it can."""
        for stage in self.stages():
            if stage[0] in _cli_commands():
                return f'"| {stage[0]} ..." is an alternative ("or sqsjobs {stage[0]} ...")'
            if stage[0] != "sqsjobs":
                return f"runs {stage[0]!r}; only sqsjobs commands run here"
            if "ID" in stage or any(PLACEHOLDER in word for word in stage):
                return "has a placeholder for a value of the reader's"
            if any("arn:..." in word for word in stage):
                return "has a placeholder ARN"
        return None

    @property
    def serves(self) -> bool:
        """Runs until a signal: a worker, an emulator, a dashboard, a watch."""
        words = (self.stages() or [[]])[0]
        return words[:2] in SERVERS or "--watch" in words


def commands(block: Block) -> list[Command]:
    """A shell block's commands. Where lines start with ``$ ``, those are the commands and
    the other lines their output; otherwise every line is a command (or a comment)."""
    lines = block.text.splitlines()
    prompted = any(line.startswith("$ ") for line in lines)
    found: list[tuple[str, list[str]]] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if prompted and not line.startswith("$ "):
            if found:
                found[-1][1].append(line)
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        text = [line.removeprefix("$ ")]
        while _unfinished("\n".join(text)) and index < len(lines):
            text.append(lines[index])
            index += 1
        found.append(("\n".join(text), []))
    return [Command(text, tuple(output)) for text, output in found]


def _words(text: str) -> list[str]:
    """The shell's words of ``text`` (operators apart, comments dropped), each placeholder
    of several words one word."""
    text = _WORDS_PLACEHOLDER.sub(PLACEHOLDER, text).replace("\\\n", " ")
    lexer = shlex.shlex(text, posix=True, punctuation_chars="|&;")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def _unfinished(text: str) -> bool:
    """Whether a command goes on on the next line: a trailing backslash, an open quote."""
    if text.endswith("\\"):
        return True
    try:
        _words(text)
    except ValueError:  # "No closing quotation"
        return True
    return False


def problems(command: Command) -> list[str]:
    """What is wrong with a command, checked without running it (empty: nothing)."""
    found: list[str] = []
    completions = _COMPLETE.findall(command.text)
    for stage in command.stages():
        if not (completions and stage == ["sqsjobs"]):  # it writes a script, checked below
            found += _stage_problems(_as_sqsjobs(stage))
    for variable, shell in completions:
        found += _completion_problems(variable, shell)
    return found


def _as_sqsjobs(stage: list[str]) -> list[str]:
    """``jobs cancel ID`` after a ``|`` means "or ``sqsjobs jobs cancel ID``" in a list of
    alternatives (the README's Operations block): parse it as the command it names."""
    if stage[0] in _cli_commands():
        return ["sqsjobs", *stage]
    return stage


def _stage_problems(stage: list[str]) -> list[str]:
    program, arguments = stage[0], stage[1:]
    if program == "sqsjobs":
        return _sqsjobs_problems(arguments)
    if program == "pip" and arguments[:1] == ["install"]:
        return _extras_problems(arguments[1:])
    if program in ("python", "python3") and arguments[:1] == ["dev.py"]:
        return _dev_problems(arguments[1:])
    if program == "aws" and arguments[:2] == ["cloudformation", "set-stack-policy"]:
        return _stack_policy_problems(arguments)
    return []


def _sqsjobs_problems(arguments: list[str]) -> list[str]:
    """The command line's own parser (click) reads the arguments, command by command, as
    when it runs, without calling the command; plus the ``-p`` keys of ``infra deploy``,
    which the command checks against its template only once it runs."""
    from sqsjobs.cli import main

    command: click.Command = main
    name, parent, rest = "sqsjobs", None, list(arguments)
    try:
        while True:
            context = command.make_context(name, rest, parent=parent)
            if not isinstance(command, click.Group):
                break
            rest = [*context._protected_args, *context.args]
            found, subcommand, rest = command.resolve_command(context, rest)
            assert found is not None and subcommand is not None
            name, command, parent = found, subcommand, context
    except click.ClickException as error:
        return [f"sqsjobs {shlex.join(arguments)}: {error.format_message()}"]
    if arguments[:2] == ["infra", "deploy"]:
        return _parameter_problems(context.params)
    return []


def _parameter_problems(params: dict[str, object]) -> list[str]:
    from sqsjobs.infra import template_parameters

    template = str(params.get("template") or "sqsjobs")
    declared = template_parameters(template)
    given = [str(pair).partition("=")[0] for pair in _values(params.get("parameter"))]
    return [f"{template} has no parameter {key}" for key in given if key not in declared]


def _values(value: object) -> tuple[object, ...]:
    return tuple(value) if isinstance(value, list | tuple) else ()


def _extras_problems(arguments: list[str]) -> list[str]:
    declared = set(_pyproject()["project"]["optional-dependencies"])
    found: list[str] = []
    for argument in arguments:
        if extras := _EXTRAS.match(argument):
            names = extras[1].split(",")
            found += [f"no extra {e!r} in pyproject.toml" for e in names if e not in declared]
        elif argument != "sqsjobs":
            found.append(f"pip install of {argument!r}, not sqsjobs or one of its extras")
    return found


def _dev_problems(arguments: list[str]) -> list[str]:
    dev = _dev()
    if not arguments or arguments[0] not in dev.COMMANDS:
        return [f"dev.py has no command {arguments[:1]}; it has {sorted(dev.COMMANDS)}"]
    options = [a for a in arguments[1:] if a.startswith("--")]
    if arguments[0] == "test":
        return [f"dev.py test has no option {o}" for o in options if o not in dev.OPTIONS]
    return []


def _stack_policy_problems(arguments: list[str]) -> list[str]:
    """The policy the README tells other tooling to set is the one ``infra deploy`` sets."""
    from sqsjobs.infra._deploy import stack_policy

    body = arguments[arguments.index("--stack-policy-body") + 1]
    expected = stack_policy("sqsjobs")
    if expected is None or json.loads(body) != json.loads(expected):
        return [f"the stack policy differs from what sqsjobs infra deploy sets: {expected}"]
    return []


def _completion_problems(variable: str, shell: str) -> list[str]:
    """The variable is the one click reads for the ``sqsjobs`` program, and the shell one
    it writes a completion script for."""
    from sqsjobs.cli import main

    found: list[str] = []
    if variable != "_SQSJOBS_COMPLETE":
        found.append(f"click reads _SQSJOBS_COMPLETE for sqsjobs, not {variable}")
    completion = get_completion_class(shell)
    if completion is None:
        return [*found, f"click has no completion for {shell}"]
    if "sqsjobs" not in completion(main, {}, "sqsjobs", variable).source():
        found.append(f"the {shell} completion script does not name sqsjobs")
    return found


@cache
def _pyproject() -> dict[str, dict[str, dict[str, list[str]]]]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)


@cache
def _dev() -> ModuleType:
    """``dev.py`` as a module (it is a script, not a package): its COMMANDS and OPTIONS."""
    spec = importlib.util.spec_from_file_location("readme_dev", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def _cli_commands() -> frozenset[str]:
    from sqsjobs.cli import COMMANDS

    return frozenset(COMMANDS)


def inline_mentions(text: str) -> Iterator[Command]:
    """The ``pip install ...`` and ``python3 dev.py ...`` commands quoted in the prose, so
    that a sentence naming an extra or a ``dev.py`` option is checked like a block."""
    for quoted in re.findall(r"`((?:pip install|python3 dev\.py) [^`]+)`", text):
        yield Command(quoted, ())
