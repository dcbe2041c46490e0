"""``--payload``: a job's JSON given inline, from a file (``@FILE``) or from stdin (``-``).

JSON text cannot start with ``@`` and ``-`` alone is not JSON, so the three forms never
overlap. Files and stdin are read as bytes and decoded as UTF-8 whatever the locale (a
leading byte-order mark is allowed), so a payload means the same on every machine.

The text is held to JSON as the library stores it, and refused here with the place it
goes wrong: ``NaN`` and ``Infinity`` (Python's json reads them, JSON has neither), and
an object that names a key twice (json keeps the last one silently, so a payload would
not be what its author wrote). What JSON allows but the library refuses (a payload over
the size cap) is refused by the library, before anything is sent.
"""

from __future__ import annotations

import codecs
import json
import os
import sys
from typing import Any

import click

STDIN = "-"
FILE_PREFIX = "@"


class NotJson(ValueError):
    """Text that is not JSON; the message says where and why."""


class Unreadable(ValueError):
    """A payload file or stdin that could not be read as text; the message names it."""


def read_payload(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """The ``--payload`` option's value as a Python value (``None`` when not given)."""
    if value is None:
        return None
    try:
        source, text = _text(value)
    except Unreadable as error:
        raise click.BadParameter(str(error), ctx, param) from None
    try:
        return parse_json(text)
    except NotJson as error:
        where = "" if source is None else f" in {source}"
        raise click.BadParameter(f"not valid JSON{where}: {error}", ctx, param) from None


def _text(value: str) -> tuple[str | None, str]:
    """Where the JSON text comes from (``None``: the option itself) and the text."""
    if value == STDIN:
        return "stdin", _decoded(sys.stdin.buffer.read(), "stdin")
    if value.startswith(FILE_PREFIX):
        return _read_file(value.removeprefix(FILE_PREFIX))
    return None, value


def _read_file(path: str) -> tuple[str, str]:
    if not path:
        raise Unreadable("expected a file name after '@', e.g. @payload.json")
    try:
        with open(os.path.expanduser(path), "rb") as file:
            data = file.read()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise Unreadable(f"cannot read payload file {path!r}: {reason}") from None
    except ValueError:
        # Refused before the OS is asked (by open, or by expanduser's user lookup): a NUL
        # or a lone surrogate cannot be part of a file name, so no such file can exist.
        raise Unreadable(
            f"cannot read payload file {path!r}: a file name cannot hold a NUL character "
            "or a lone surrogate"
        ) from None
    return repr(path), _decoded(data, f"payload file {path!r}")


def _decoded(data: bytes, source: str) -> str:
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[start:].decode()
    except UnicodeDecodeError as error:
        at = start + error.start
        raise Unreadable(
            f"{source} is not UTF-8 text: byte 0x{data[at]:02x} at offset {at}"
        ) from None


def parse_json(text: str) -> Any:
    """``text`` as JSON, or ``NotJson`` naming the line and column where it stops being JSON."""
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise NotJson(f"{error.msg} at line {error.lineno} column {error.colno}") from None
    except RecursionError:
        raise NotJson("nested too deeply") from None
    except NotJson:
        raise
    except ValueError as error:  # an int past Python's digit limit
        raise NotJson(str(error)) from None


def _no_constant(name: str) -> Any:
    raise NotJson(f"{name} is not a JSON number (JSON has no NaN or Infinity)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise NotJson(f"key {key!r} appears twice in one object")
        found[key] = value
    return found
