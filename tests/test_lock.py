"""uv.lock, the environment every run of the suite installs, agrees with pyproject.toml.

uv itself refuses a stale lock (``uv sync --locked``), but only once someone syncs; this
test says so in the run that changed the ranges, naming each requirement that differs.
It compares what pyproject.toml declares, each extra with the extras it names of this
package spelled out, with what uv recorded of it when it last resolved (the root
package's ``requires-dist`` and ``provides-extras``), the way uv decides whether a lock
is current.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
# name, extras, specifiers, the extra that brings it (None: the base install)
Declared = tuple[str, frozenset[str], frozenset[str], str | None]


def declared(project: Mapping[str, Any]) -> set[Declared]:
    own = canonicalize_name(project["name"])
    extras: Mapping[str, list[str]] = project.get("optional-dependencies", {})

    def flattened(lines: list[str], seen: frozenset[str]) -> Iterator[Requirement]:
        for line in lines:
            requirement = Requirement(line)
            if canonicalize_name(requirement.name) != own:
                yield requirement
                continue
            for extra in sorted(requirement.extras - seen):
                yield from flattened(extras[extra], seen | {extra})

    found = {_declared(r, None) for r in flattened(project.get("dependencies", []), frozenset())}
    for extra, lines in extras.items():
        found |= {_declared(r, extra) for r in flattened(lines, frozenset({extra}))}
    return found


def _declared(requirement: Requirement, extra: str | None) -> Declared:
    specifiers = frozenset(str(s) for s in requirement.specifier)
    return canonicalize_name(requirement.name), frozenset(requirement.extras), specifiers, extra


def locked(lock: Mapping[str, Any], name: str) -> tuple[set[Declared], set[str], str]:
    """What the lock recorded of the project: requirements, extras, requires-python."""
    [root] = [p for p in lock["package"] if p["name"] == name and "editable" in p["source"]]
    metadata = root["metadata"]
    found = set()
    for entry in metadata["requires-dist"]:
        marker = entry.get("marker")
        extra = None
        if marker is not None:
            extra = marker.removeprefix("extra == '").removesuffix("'")
            assert marker == f"extra == '{extra}'", f"a marker this test does not read: {marker}"
        specifiers = frozenset(s.strip() for s in entry.get("specifier", "").split(",") if s)
        found.add(
            (
                canonicalize_name(entry["name"]),
                frozenset(entry.get("extras", ())),
                specifiers,
                extra,
            )
        )
    return found, set(metadata.get("provides-extras", ())), lock["requires-python"]


def differences(pyproject: Mapping[str, Any], lock: Mapping[str, Any]) -> list[str]:
    """What pyproject.toml says and uv.lock does not, or the other way round; [] if none."""
    project = pyproject["project"]
    requirements, extras, python = locked(lock, project["name"])
    wanted = declared(project)
    found = [f"pyproject.toml declares {_show(d)}, uv.lock has not" for d in wanted - requirements]
    found += [f"uv.lock has {_show(d)}, pyproject.toml does not" for d in requirements - wanted]
    if extras != set(project.get("optional-dependencies", {})):
        found.append(f"extras: uv.lock has {sorted(extras)}")
    if python != project["requires-python"]:
        found.append(f"requires-python: uv.lock has {python!r}")
    return sorted(found)


def _show(requirement: Declared) -> str:
    name, extras, specifiers, extra = requirement
    spelled = name + (f"[{','.join(sorted(extras))}]" if extras else "")
    spelled += ",".join(sorted(specifiers))
    return spelled + (f" (extra {extra!r})" if extra else "")


def read(name: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / name).read_text())


def test_uv_lock_is_current_with_pyproject() -> None:
    problems = differences(read("pyproject.toml"), read("uv.lock"))
    assert problems == [], "run `python3 dev.py lock` and commit uv.lock:\n" + "\n".join(problems)


def test_a_range_changed_by_hand_is_named() -> None:
    pyproject = read("pyproject.toml")
    worker = pyproject["project"]["optional-dependencies"]["worker"]
    worker[worker.index("rich>=13,<16")] = "rich>=13,<15"
    problems = differences(pyproject, read("uv.lock"))
    # the worker extra, and local and dev through it
    assert "pyproject.toml declares rich<15,>=13 (extra 'worker'), uv.lock has not" in problems
    assert "uv.lock has rich<16,>=13 (extra 'dev'), pyproject.toml does not" in problems
    assert len(problems) == 6


def test_an_extra_added_by_hand_is_named() -> None:
    pyproject = read("pyproject.toml")
    pyproject["project"]["optional-dependencies"]["queues"] = ["sqsjobs[worker]"]
    problems = differences(pyproject, read("uv.lock"))
    assert any(p.startswith("extras: uv.lock has") for p in problems)
    assert (
        "pyproject.toml declares aiobotocore<4,>=2.25 (extra 'queues'), uv.lock has not" in problems
    )


def test_a_base_dependency_added_by_hand_is_named() -> None:
    pyproject = read("pyproject.toml")
    pyproject["project"]["dependencies"].append("attrs>=23")
    assert differences(pyproject, read("uv.lock")) == [
        "pyproject.toml declares attrs>=23, uv.lock has not"
    ]
