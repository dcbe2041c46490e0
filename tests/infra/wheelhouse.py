"""A local wheelhouse of what a Lambda package needs, made offline from this environment.

The tests have no network, so ``sqsjobs infra package`` installs from a directory of
wheels (``--no-index --find-links``): each distribution that ``sqsjobs[cron]`` needs is
packed back into a wheel from its installed files, as its ``RECORD`` lists them, under the
tags its ``.dist-info/WHEEL`` gives (this interpreter's and platform's: pydantic-core's
compiled core is the host's), with a fresh ``RECORD``. sqsjobs's own wheel is built from
the repository by pip and hatchling (both installed here, no build isolation): the
environment has it installed in editable mode, whose files are not a wheel's.
"""

from __future__ import annotations

import base64
import hashlib
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPOSITORY = Path(__file__).resolve().parents[2]
SKIPPED = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")


def needed(root: str, extras: set[str]) -> list[metadata.Distribution]:
    """Every installed distribution ``root[extras]`` needs here, ``root`` left out."""
    found: dict[str, metadata.Distribution] = {}
    todo: list[tuple[str, set[str]]] = [(root, extras)]
    while todo:
        name, wanted = todo.pop()
        for line in metadata.distribution(name).requires or []:
            requirement = Requirement(line)
            if requirement.marker is not None and not _applies(requirement.marker, wanted):
                continue
            key = canonicalize_name(requirement.name)
            if key not in found:
                found[key] = metadata.distribution(requirement.name)
                todo.append((requirement.name, set(requirement.extras)))
    return [found[key] for key in sorted(found)]


def _applies(marker: Marker, extras: set[str]) -> bool:
    return any(marker.evaluate({"extra": extra}) for extra in extras or {""})


def tags(distribution: metadata.Distribution) -> list[str]:
    """The wheel tags its ``WHEEL`` file lists: ``cp311-cp311-manylinux_2_17_x86_64``."""
    text = distribution.read_text("WHEEL") or ""
    return re.findall(r"^Tag: (\S+)$", text, re.M)


def wheel_name(distribution: metadata.Distribution) -> str:
    """``name-version-py.py-abi-plat.plat.whl``: the compressed tag set of its tags."""
    parts = [tag.split("-") for tag in tags(distribution)]
    joined = [".".join(sorted({p[i] for p in parts})) for i in range(3)]
    name = re.sub(r"[-_.]+", "_", distribution.metadata["Name"]).lower()
    return f"{name}-{distribution.version}-{'-'.join(joined)}.whl"


def repack(distribution: metadata.Distribution, into: Path) -> Path:
    """``distribution``'s installed files as a wheel in ``into``."""
    base = Path(str(distribution.locate_file("")))
    files = [
        f
        for f in distribution.files or []
        if not str(f).startswith("..")
        and "__pycache__" not in f.parts
        and not (f.parent.name.endswith(".dist-info") and f.name in SKIPPED)
    ]
    info = next(f.parent for f in distribution.files or [] if f.name == "METADATA")
    out = into / wheel_name(distribution)
    record: list[str] = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as wheel:
        for file in sorted(files, key=str):
            data = (base / file).read_bytes()
            wheel.writestr(file.as_posix(), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{file.as_posix()},sha256={digest.decode()},{len(data)}")
        record.append(f"{info.as_posix()}/RECORD,,")
        wheel.writestr(f"{info.as_posix()}/RECORD", "\n".join(record) + "\n")
    return out


def build_sqsjobs(into: Path) -> Path:
    """sqsjobs's wheel, built from the repository (pip and hatchling, no isolation)."""
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"),
            *("--disable-pip-version-check", "--wheel-dir", str(into), str(REPOSITORY)),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (wheel,) = into.glob("sqsjobs-*.whl")
    return wheel


def make_wheelhouse(into: Path, extras: set[str]) -> Path:
    """A directory of wheels for ``sqsjobs[extras]``; sqsjobs's own wheel is returned."""
    into.mkdir(parents=True, exist_ok=True)
    for distribution in needed("sqsjobs", extras):
        repack(distribution, into)
    return build_sqsjobs(into)
