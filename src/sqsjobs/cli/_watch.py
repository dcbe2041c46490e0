"""``--watch [SECONDS]``: a command's view, taken again every few seconds until Ctrl-C.

On a terminal the view is redrawn in place (rich ``Live``), like ``watch(1)``. Output
that is not a terminal (a pipe, a file, ``tee``) cannot be redrawn, yet refusing it
would take away the way to record a queue draining during an incident; so there each
snapshot is printed after the last, under a rule with the time it was taken. With
``--json``, wherever it goes, each is one JSON document on a line of its own (JSON
Lines, for ``jq``).
Ctrl-C ends a watch with exit 0: it is how watching stops, not a failure. A refresh
that fails ends it like the command without ``--watch`` (one ``error:`` line, exit 1).
Each refresh costs what the command costs once. The interval is finite and at most a
day: NaN would refresh without pause (``max(0, nan)`` is 0), and an interval too large
for ``time.sleep`` would fail only after the first snapshot was shown.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import click
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from ._options import Seconds
from ._render import json_text

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_INTERVAL = 2.0
MIN_INTERVAL = 0.1
MAX_INTERVAL = 86_400.0  # a day


def watch_option(what: str) -> Callable[[F], F]:
    """``--watch [SECONDS]`` into the parameter ``watch_every``: ``None`` when not watching."""
    return click.option(
        "--watch",
        "watch_every",
        type=Seconds(min=MIN_INTERVAL, max=MAX_INTERVAL),
        is_flag=False,
        flag_value=DEFAULT_INTERVAL,
        default=None,
        metavar="[SECONDS]",
        help=f"Show {what} again every SECONDS (default {DEFAULT_INTERVAL:g}) until Ctrl-C, "
        "which exits 0. On a terminal the view is redrawn in place; elsewhere (a pipe, a "
        "file) each snapshot follows the last under a line with its time. With --json, "
        "each snapshot is one JSON document on a line of its own.",
    )


def watch(
    every: float,
    view: Callable[[], RenderableType],
    document: Callable[[], object] | None,
    console: Console,
) -> None:
    """Show ``view()`` (or, given, ``document()`` as JSON) every ``every`` seconds until Ctrl-C."""
    try:
        if document is not None:
            _repeat(every, lambda: _write_line(json_text(document())))
        elif console.is_terminal:
            _live(every, view, console)
        else:
            _repeat(every, lambda: _print_snapshot(view(), console))
    except KeyboardInterrupt:
        return


def _repeat(every: float, show: Callable[[], None]) -> None:
    while True:
        began = time.monotonic()
        show()
        time.sleep(max(0.0, every - (time.monotonic() - began)))


def _live(every: float, view: Callable[[], RenderableType], console: Console) -> None:
    with Live(console=console, auto_refresh=False) as live:
        _repeat(every, lambda: live.update(_with_footer(view(), every), refresh=True))


def _with_footer(shown: RenderableType, every: float) -> Group:
    footer = f"Every {every:g}s, last at {_now()}; Ctrl-C to stop"
    return Group(shown, Text(footer, style="dim"))


def _print_snapshot(shown: RenderableType, console: Console) -> None:
    console.rule(_now(), characters="─")
    console.print(shown)
    console.file.flush()


def _write_line(text: str) -> None:
    sys.stdout.write(f"{text}\n")
    sys.stdout.flush()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
