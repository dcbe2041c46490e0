"""A documentation build that fails on a public name without a docstring.

mkdocstrings renders what a docstring says and quietly renders nothing for a name that
has none, so the strict build alone would not notice an undocumented method. This hook
walks the public API (every name in the ``__all__`` of the modules below, and each
public method and property of the classes among them, inherited ones included) and
logs a warning for each name with no docstring; ``mkdocs build --strict`` fails on it.
It also warns about a public name the API reference pages never render, so a new export
cannot be left out of the reference.

Run as a script (``python docs/hooks/public_api.py``) it prints the same findings.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import griffe

ROOT = Path(__file__).resolve().parents[2]
PUBLIC_MODULES = (
    "sqsjobs",
    "sqsjobs.aws",
    "sqsjobs.aws.lambda_",
    "sqsjobs.store",
    "sqsjobs.testing",
    "sqsjobs.infra",
    "sqsjobs.contrib.dashboard",
)
REFERENCE = ROOT / "docs" / "reference" / "api"
_RENDERED = re.compile(r"^::: ([\w.]+)\s*$", re.MULTILINE)

log = logging.getLogger("mkdocs.plugins.sqsjobs.public_api")


def public_names() -> Iterator[tuple[str, Any]]:
    """Each public name, dotted as a reader imports it, with the object it resolves to."""
    package = griffe.load("sqsjobs", search_paths=[str(ROOT / "src")], resolve_aliases=True)
    for dotted in PUBLIC_MODULES:
        module = package if dotted == "sqsjobs" else package[dotted.removeprefix("sqsjobs.")]
        if module.exports is None:
            raise SystemExit(f"{dotted} has no __all__: its public names are unknown")
        for name in module.exports:
            target = _final(module[name])
            yield f"{dotted}.{name}", target
            if target.is_class:
                yield from _members(f"{dotted}.{name}", target)


def _members(owner: str, cls: Any) -> Iterator[tuple[str, Any]]:
    for name, member in cls.all_members.items():
        if name.startswith("_"):
            continue
        target = _final(member)
        if target is None or (target.is_attribute and "property" not in target.labels):
            continue  # fields: the class docstring describes them
        if not target.path.startswith("sqsjobs."):
            continue  # inherited from the standard library or pydantic
        yield f"{owner}.{name}", target


def _final(obj: Any) -> Any:
    try:
        return obj.final_target if obj.is_alias else obj
    except griffe.AliasResolutionError:
        return None


def rendered() -> set[str]:
    """The names the API reference pages render with ``:::``."""
    return {
        match[1]
        for page in REFERENCE.glob("*.md")
        for match in _RENDERED.finditer(page.read_text(encoding="utf-8"))
    }


def findings() -> list[str]:
    shown = rendered()
    found: list[str] = []
    for dotted, target in public_names():
        if target is None:
            found.append(f"{dotted}: cannot be resolved")
        elif not (target.docstring and target.docstring.value.strip()):
            found.append(f"{dotted} has no docstring ({target.relative_filepath}:{target.lineno})")
        owner = dotted.rsplit(".", 1)[0]
        if dotted.count(".") and owner in PUBLIC_MODULES and dotted not in shown:
            found.append(f"{dotted} is public but no page of docs/reference/api renders it")
    return found


def on_pre_build(config: Any) -> None:  # a MkDocs hook: runs before every build
    for finding in findings():
        log.warning(finding)


if __name__ == "__main__":
    problems = findings()
    print("\n".join(problems) or "every public name has a docstring and a place")
    sys.exit(1 if problems else 0)
