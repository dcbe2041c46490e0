"""Options several commands share, written once: which queues, how many rows, how long.

A duration is a ``Seconds`` range, not click's ``FloatRange``: that one lets NaN through
(it fails every comparison, so it is never out of range) and infinity too, and either
would make a loop spin without pause, never end, or fail only after the command started.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class Seconds(click.FloatRange):
    """A finite number of seconds within the range: NaN and the infinities are refused."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            bounds = [
                f"{word} {bound:g}"
                for word, bound in (("at least", self.min), ("at most", self.max))
                if bound is not None
            ]
            self.fail(
                f"{value!r} is not a number of seconds: it must be finite, {' and '.join(bounds)}",
                param,
                ctx,
            )
        return number


def queues_option(help: str) -> Callable[[F], F]:
    """``--queue/-q``, repeatable, into the parameter ``queues`` (a tuple; empty for all)."""
    return click.option("--queue", "-q", "queues", multiple=True, help=help)


def limit_option(help: str, *, default: int | None, maximum: int | None = None) -> Callable[[F], F]:
    """``--limit/-n``: at least 1, at most ``maximum``; shown with its default if it has one."""
    return click.option(
        "--limit",
        "-n",
        type=click.IntRange(1, maximum),
        default=default,
        show_default=default is not None,
        help=help,
    )


def seconds_option(name: str, help: str, *, default: float) -> Callable[[F], F]:
    """A duration in seconds, zero or more."""
    return click.option(
        name,
        type=Seconds(0),
        default=default,
        show_default=True,
        metavar="SECONDS",
        help=help,
    )


def json_option(what: str) -> Callable[[F], F]:
    """``--json``: the records as one JSON document on stdout, for scripts and ``jq``."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help=f"Print one JSON document, {what} (every field, instants in ISO 8601), "
        "and nothing else on stdout.",
    )
