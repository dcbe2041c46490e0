"""A Lambda deployment zip of an application's jobs: ``sqsjobs infra package``.

The zip holds, at its root (Lambda's ``/var/task``, first on ``sys.path``):

- sqsjobs with the ``cron`` extra (the cron entry point and ``registry.cron`` need its
  parser) and any other extras asked for, boto3 and botocore included (the runtime's
  bundled ones are older than sqsjobs requires, and the zip's come first on
  ``sys.path``), and the application's own requirements (``-r``), installed by pip for
  the target only: CPython X.Y on Lambda's Amazon Linux for arm64 or x86_64, wheels only
  (``--platform`` for each manylinux tag that runtime's glibc runs, ``--only-binary
  :all:``), so no wheel of the build machine's platform and nothing compiled here ends up
  in the zip;
- the application's top-level package (or module) that ``--registry`` names, copied from
  ``--source``;
- ``sqsjobs_lambda_handler.py`` (``_archive.handler_module``): ``handler``, ``reconcile``
  and ``cron``, one function's handler each.

pip runs as ``sys.executable -m pip``, with the index options given passed through. The
zip is reproducible (``_archive.write_zip``) and written only once everything else
succeeded, next to its destination first, then moved there: a refused or failed build
leaves nothing behind. This module never imports the application: its dependencies are
the target's, not necessarily importable here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .. import __version__
from ._archive import (
    ENTRY_POINTS,
    HANDLER_MODULE,
    Entry,
    Written,
    handler_module,
    installed_files,
    source_files,
    write_zip,
)

# Lambda's Python runtimes that sqsjobs supports (requires-python >= 3.11), and the glibc
# of the Amazon Linux each runs on: python3.11 on Amazon Linux 2 (glibc 2.26), the later
# ones on Amazon Linux 2023 (glibc 2.34). A wheel built for a newer glibc fails there.
GLIBC_MINOR = {"3.11": 26, "3.12": 34, "3.13": 34, "3.14": 34}
PYTHONS = tuple(GLIBC_MINOR)
"""Lambda's Python runtimes that sqsjobs runs on, as ``Target.python`` names them."""
DEFAULT_PYTHON = "3.12"
"""The Python a package is built for unless another is asked for."""
MACHINES = {"arm64": "aarch64", "x86_64": "x86_64"}
"""Lambda's names for its architectures (``Target.arch``), and the machine names of
wheel tags, by which pip picks the wheels a package holds."""
DEFAULT_ARCH = "arm64"
"""The architecture a package is built for unless another is asked for."""
# The oldest glibc a manylinux tag names for each machine (manylinux1 is glibc 2.5).
OLDEST_GLIBC = {"aarch64": 17, "x86_64": 5}
EXTRAS = ("cron", "tracing")
"""The extras a package may hold (``PackageRequest.extras``): the cron parser (always
installed) and OpenTelemetry's API, for the spans an application's tracer provider
records. The Prometheus endpoint serves nothing in a function; EMF metrics need no extra."""
ALWAYS = ("cron",)
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_REGISTRY = re.compile(rf"(?P<module>{_NAME}(?:\.{_NAME})*):(?P<attribute>{_NAME}(?:\.{_NAME})*)")
Runner = Callable[..., "subprocess.CompletedProcess[str]"]


class PackageRefused(ValueError):
    """The inputs cannot make a package: bad usage, and nothing was written."""


class PackageFailed(RuntimeError):
    """pip could not install what the package needs; nothing was written."""


class Target(NamedTuple):
    """The Lambda runtime a package is built for."""

    python: str  # "3.12"
    arch: str  # Lambda's name: "arm64" or "x86_64"

    @classmethod
    def checked(cls, python: str, arch: str) -> Target:
        """The target, if Lambda has that runtime on that architecture.

        Raises:
            PackageRefused: ``python`` is not one of ``PYTHONS``, or ``arch`` not one of
                ``MACHINES``.
        """
        if python not in GLIBC_MINOR:
            raise PackageRefused(
                f"Python {python!r} is not a Lambda runtime sqsjobs runs on: choose one of "
                f"{', '.join(PYTHONS)} (sqsjobs needs 3.11 or newer, and Lambda's newest "
                "Python runtime is python3.14)"
            )
        if arch not in MACHINES:
            raise PackageRefused(
                f"Architecture {arch!r} is not one of Lambda's: {', '.join(MACHINES)}"
            )
        return cls(python, arch)

    @property
    def runtime(self) -> str:
        """Lambda's name for the runtime: ``python3.12``."""
        return f"python{self.python}"

    @property
    def platforms(self) -> list[str]:
        """pip's ``--platform`` values: every manylinux tag the runtime's glibc runs.

        pip does not widen ``manylinux_2_34_aarch64`` to the older glibc versions, so each
        is named, newest first, then the legacy alias ``manylinux2014`` (glibc 2.17, which
        pip widens to manylinux2010 and manylinux1 on x86_64).
        """
        machine = MACHINES[self.arch]
        newest, oldest = GLIBC_MINOR[self.python], OLDEST_GLIBC[machine]
        tags = [f"manylinux_2_{minor}_{machine}" for minor in range(newest, oldest - 1, -1)]
        return [*tags, f"manylinux2014_{machine}"]

    def describe(self) -> str:
        """The target in words, with the wheels it takes, for messages and the CLI."""
        machine = MACHINES[self.arch]
        return (
            f"{self.runtime} on {self.arch} (wheels for cp{self.python.replace('.', '')} "
            f"and manylinux_2_{GLIBC_MINOR[self.python]}_{machine} or older, or pure Python)"
        )


DEFAULT_TARGET = Target(DEFAULT_PYTHON, DEFAULT_ARCH)


@dataclass(frozen=True)
class PackageRequest:
    """What to build; ``check`` refuses what cannot work before anything runs."""

    registry: str  # "app.jobs:registry"
    out: Path
    source: Path = Path()
    target: Target = DEFAULT_TARGET
    extras: tuple[str, ...] = ()
    requirements: tuple[Path, ...] = ()
    sqsjobs_from: Path | None = None
    # pip's own index options, passed through: ("--index-url", URL, "--no-index", ...)
    index_options: tuple[str, ...] = field(default=())

    def module(self) -> str:
        """The module of ``registry`` (``app.jobs`` of ``app.jobs:registry``).

        Raises:
            PackageRefused: ``registry`` is not ``MODULE:REGISTRY`` in dotted names.
        """
        found = _REGISTRY.fullmatch(self.registry)
        if found is None:
            raise PackageRefused(
                f"--registry must be MODULE:REGISTRY with dotted Python names, e.g. "
                f"app.jobs:registry; got {self.registry!r}"
            )
        return found["module"]

    def check(self) -> Path:
        """Refuse a request that cannot work; the path of the top-level package to copy."""
        module = self.module()
        top = module.split(".")[0]
        if top in ("sqsjobs", HANDLER_MODULE):
            raise PackageRefused(f"The application's package cannot be named {top!r}")
        for extra in self.extras:
            if extra not in EXTRAS:
                raise PackageRefused(f"Unknown extra {extra!r}: sqsjobs's are {', '.join(EXTRAS)}")
        if self.out.is_dir() or not self.out.parent.is_dir():
            raise PackageRefused(f"--out {str(self.out)!r} must be a file in an existing directory")
        source = self.sqsjobs_from
        if source is not None and not source.is_dir() and source.suffix != ".whl":
            raise PackageRefused(f"--sqsjobs-from must be a wheel or a source directory: {source}")
        return module_root(self.source, module)

    def all_extras(self) -> list[str]:
        """The extras installed: those asked for and those always in (the cron parser)."""
        return sorted({*ALWAYS, *self.extras})


class Package(NamedTuple):
    """A package written: where, how big, and what it holds."""

    path: Path
    size: int  # bytes, zipped
    unpacked: int  # bytes, the files' sizes added up
    files: int
    sqsjobs_version: str
    target: Target

    @property
    def handlers(self) -> dict[str, str]:
        """Each entry point's Lambda handler setting."""
        return {entry: f"{HANDLER_MODULE}.{entry}" for entry in ENTRY_POINTS}


def module_root(source: Path, module: str) -> Path:
    """The top-level package or module of ``module`` under ``source``, which must hold
    ``module`` itself (``app/jobs.py`` or ``app/jobs/__init__.py`` for ``app.jobs``)."""
    parts = module.split(".")
    top_dir, leaf = source / parts[0], source.joinpath(*parts)
    if len(parts) == 1:
        if (top_dir / "__init__.py").is_file():
            return top_dir  # a package: Python takes it before a module of the same name
        if leaf.with_suffix(".py").is_file():
            return leaf.with_suffix(".py")
    elif top_dir.is_dir() and (
        (leaf / "__init__.py").is_file() or leaf.with_suffix(".py").is_file()
    ):
        return top_dir  # a package, or a namespace package (no __init__.py)
    tried = f"{leaf.relative_to(source)}.py or {leaf.relative_to(source) / '__init__.py'}"
    raise PackageRefused(
        f"No module {module!r} under --source {str(source)!r} (looked for {tried}): "
        "give the directory that holds its top-level package"
    )


def build_package(request: PackageRequest, run: Runner = subprocess.run) -> Package:
    """Build the zip ``request`` describes (module docs); ``PackageRefused`` for bad
    inputs, ``PackageFailed`` when pip cannot install the target's dependencies."""
    root = request.check()
    top = request.module().split(".")[0]
    with tempfile.TemporaryDirectory(prefix="sqsjobs-package-") as scratch:
        work = Path(scratch)
        requirement = _sqsjobs_requirement(request, work, run)
        target_dir = work / "target"
        _pip(run, pip_install(request, requirement, target_dir), request.target)
        entries = installed_files(target_dir)
        version = installed_version(entries)
        clash = sorted(n for n in entries if n == top or n.startswith((f"{top}/", f"{top}.")))
        if clash:
            raise PackageRefused(
                f"The application's package {top!r} has the name of a dependency's "
                f"({clash[0]}): rename it, or it would shadow that dependency"
            )
        entries.update(source_files(root, top if root.is_dir() else f"{top}.py"))
        module = handler_module(
            request.registry, request.target.python, request.target.arch, version
        )
        entries[f"{HANDLER_MODULE}.py"] = Entry(module)
        written = _write(entries, request.out)
    return Package(
        request.out, written.size, written.unpacked, written.files, version, request.target
    )


def pip_install(request: PackageRequest, requirement: str, target_dir: Path) -> list[str]:
    """The pip command that installs the package's dependencies for its target only."""
    target = request.target
    platforms = [option for tag in target.platforms for option in ("--platform", tag)]
    requirements = [option for path in request.requirements for option in ("-r", str(path))]
    return [
        *_pip_prefix(),
        "install",
        "--target",
        str(target_dir),
        "--implementation",
        "cp",
        "--python-version",
        target.python,
        *platforms,
        "--only-binary=:all:",
        "--no-compile",
        *request.index_options,
        *requirements,
        requirement,
    ]


def installed_version(entries: Mapping[str, Entry]) -> str:
    """The version of sqsjobs pip installed, from its ``.dist-info`` directory's name."""
    for name in sorted(entries):
        found = re.fullmatch(r"sqsjobs-([^/]+)\.dist-info/METADATA", name)
        if found:
            return found[1]
    raise PackageFailed("pip installed no sqsjobs distribution into the package")


def _sqsjobs_requirement(request: PackageRequest, work: Path, run: Runner) -> str:
    """``sqsjobs[cron,...]`` at this version from the index, or from ``--sqsjobs-from``
    (a wheel, or a source directory built into one here)."""
    extras = ",".join(request.all_extras())
    source = request.sqsjobs_from
    if source is None:
        return f"sqsjobs[{extras}]=={__version__}"
    if source.is_dir():
        wheels = work / "sqsjobs-wheel"
        command = [*_pip_prefix(), "wheel", "--no-deps", "--wheel-dir", str(wheels)]
        _pip(run, [*command, *request.index_options, str(source)], None)
        built = sorted(wheels.glob("sqsjobs-*.whl"))
        if not built:
            raise PackageFailed(f"pip built no sqsjobs wheel from {str(source)!r}")
        source = built[0]
    return f"sqsjobs[{extras}] @ {source.resolve().as_uri()}"


def _pip_prefix() -> list[str]:
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]


def _pip(run: Runner, command: Sequence[str], target: Target | None) -> None:
    done = run(list(command), capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return
    said = [line.removeprefix("ERROR: ") for line in done.stderr.splitlines()]
    errors = [line for line in said if line and not line.startswith(("WARNING", " "))][-3:]
    detail = " ".join(errors) or f"exit status {done.returncode}"
    what = f"the dependencies for {target.describe()}" if target else "sqsjobs's wheel"
    hint = (
        ": a dependency without such a wheel cannot go into the zip (pick the other "
        "--arch or --python, or a release of it that has one)"
        if target and "No matching distribution" in done.stderr
        else ""
    )
    raise PackageFailed(f"pip could not get {what}{hint}. pip said: {detail}")


def _write(entries: dict[str, Entry], out: Path) -> Written:
    """``write_zip`` to a file next to ``out``, then moved over it: never half a zip."""
    partial = out.parent / f".{out.name}.{uuid.uuid4().hex[:12]}.partial"
    try:
        written = write_zip(entries, partial)
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return written
