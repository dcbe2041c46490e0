"""The files of a Lambda deployment zip, and the zip itself, byte for byte reproducible.

``sqsjobs infra package`` (``_package``) gathers what pip installed for the target, the
application's package and a generated handler module (``handler_module``) into one
mapping of archive names to contents, then ``write_zip`` writes them sorted by name,
each with the same timestamp (1980-01-01, the earliest a zip can hold), the same
permissions scheme and compression, so the same inputs give the same bytes: an S3 upload
or a CloudFormation update then sees no change where there is none.

What would vary between builds of the same inputs, or leak the build machine, stays out:
compiled ``__pycache__`` files (pip runs with ``--no-compile``; they would be the build
machine's Python's anyway), the console scripts pip writes to ``bin/`` (their first line
names the build machine's interpreter; Lambda runs none), and each distribution's
``direct_url.json`` (the path of the wheel it came from, a temporary one for a source
directory), whose line its ``RECORD`` then drops too.
"""

from __future__ import annotations

import os
import stat
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

HANDLER_MODULE = "sqsjobs_lambda_handler"
# The generated module's entry points, each a function of the same zip.
ENTRY_POINTS = ("handler", "reconcile", "cron")
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
COMPRESS_LEVEL = 6
SKIPPED_DIRS = frozenset({"__pycache__"})
SKIPPED_SUFFIXES = (".pyc", ".pyo")


class Entry(NamedTuple):
    """One file of the zip: its contents (a file to read, or bytes) and whether it runs."""

    source: Path | bytes
    executable: bool = False

    def data(self) -> bytes:
        return self.source if isinstance(self.source, bytes) else self.source.read_bytes()


class Written(NamedTuple):
    """What ``write_zip`` wrote: the zip's size and the size of its files unpacked."""

    size: int
    unpacked: int
    files: int


def installed_files(target: Path) -> dict[str, Entry]:
    """What ``pip install --target`` left in ``target``, by archive name (see module docs)."""
    found: dict[str, Entry] = {}
    for path in _walk(target, hidden=True):
        name = path.relative_to(target).as_posix()
        if name.startswith("bin/") or _is_direct_url(name):
            continue
        found[name] = Entry(path, _executable(path))
    for name in [n for n in found if n.endswith(".dist-info/RECORD")]:
        found[name] = Entry(_without_direct_url(found[name].data()))
    return found


def source_files(root: Path, prefix: str) -> dict[str, Entry]:
    """The application's package (a directory) or module (a file), by archive name.

    Hidden files and directories (``.git``, ``.mypy_cache``), ``__pycache__`` and
    compiled files, and any virtual environment inside it are left out.
    """
    if root.is_file():
        return {prefix: Entry(root, _executable(root))}
    return {
        f"{prefix}/{path.relative_to(root).as_posix()}": Entry(path, _executable(path))
        for path in _walk(root, hidden=False)
    }


def write_zip(entries: Mapping[str, Entry], out: Path) -> Written:
    """Write ``entries`` to the zip ``out`` in name order, reproducibly (see module docs)."""
    unpacked = 0
    with zipfile.ZipFile(out, "w") as archive:
        for name in sorted(entries):
            entry = entries[name]
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.create_system = 3  # Unix: the permissions below are read as such
            mode = 0o755 if entry.executable else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            data = entry.data()
            unpacked += len(data)
            archive.writestr(info, data, compresslevel=COMPRESS_LEVEL)
    return Written(out.stat().st_size, unpacked, len(entries))


def handler_module(registry: str, python: str, arch: str, version: str) -> bytes:
    """The generated module: the application's registry and the three entry points.

    It checks first that it runs where it was built for (a zip of arm64 wheels on an
    x86_64 function fails in pydantic's compiled core otherwise, with an error that
    does not say why), then imports the registry, so a broken import fails the cold
    start. Each entry point makes its handler over ``SqsJobStore.from_env()`` when first
    invoked, so the module imports anywhere, and a function builds only its own.
    """
    module, _, attribute = registry.partition(":")
    text = _HANDLER_TEMPLATE.format(
        version=version,
        python=python,
        arch=arch,
        registry=registry,
        module=module,
        path=tuple(attribute.split(".")),
        major_minor=tuple(int(part) for part in python.split(".")),
        name=HANDLER_MODULE,
    )
    return text.encode()


def _walk(root: Path, *, hidden: bool) -> Iterator[Path]:
    """Every file under ``root``, in a stable order, skipping what the module docs say."""
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIPPED_DIRS
            and (hidden or not d.startswith("."))
            and not (here / d / "pyvenv.cfg").exists()
        )
        for name in sorted(files):
            if name.endswith(SKIPPED_SUFFIXES) or (not hidden and name.startswith(".")):
                continue
            yield here / name


def _executable(path: Path) -> bool:
    return bool(path.stat().st_mode & stat.S_IXUSR)


def _is_direct_url(name: str) -> bool:
    folder, _, base = name.rpartition("/")
    return base == "direct_url.json" and folder.endswith(".dist-info") and "/" not in folder


def _without_direct_url(record: bytes) -> bytes:
    lines = record.decode().splitlines(keepends=True)
    kept = [line for line in lines if not _is_direct_url(line.split(",", 1)[0])]
    return "".join(kept).encode()


_HANDLER_TEMPLATE = '''\
"""The entry points of an sqsjobs Lambda worker, generated by `sqsjobs infra package`.

Built by sqsjobs {version} for python{python} on {arch}, over the registry {registry}.
The same zip serves three functions, each with its own handler setting:

    {name}.handler    the job queue's event source mapping (make_lambda_handler)
    {name}.reconcile  a schedule, every few minutes (make_reconcile_handler)
    {name}.cron       a schedule, every minute: the registry's crons (make_cron_handler)

Each builds its handler when first invoked, over SqsJobStore.from_env() (SQSJOBS_TABLE,
SQSJOBS_QUEUES and the others the template sets), and keeps it while the execution
environment lives.
"""

from __future__ import annotations

import importlib
import platform
import sys
from typing import Any

BUILT_FOR = ({major_minor!r}, {arch!r})
MACHINES = {{"arm64": ("aarch64", "arm64"), "x86_64": ("x86_64", "amd64")}}


def _check_platform() -> None:
    """Refuse to run on another Python or architecture than the wheels were chosen for."""
    version, arch = BUILT_FOR
    running, machine = sys.version_info[:2], platform.machine().lower()
    if running != version or machine not in MACHINES[arch]:
        raise RuntimeError(
            f"This package was built for python{{version[0]}}.{{version[1]}} on {{arch}}, "
            f"but runs on python{{running[0]}}.{{running[1]}} on {{machine}}: set the "
            "function's Runtime and Architectures to match, or build it again with "
            "sqsjobs infra package --python X.Y --arch ARCH"
        )


_check_platform()

from sqsjobs import JobRegistry  # noqa: E402  (after the check: the wheels must fit)
from sqsjobs.aws import SqsJobStore  # noqa: E402

registry: Any = importlib.import_module({module!r})
for _part in {path!r}:
    registry = getattr(registry, _part)

_made: dict[str, Any] = {{}}


def handler(event: Any, context: Any) -> Any:
    """Run a batch of the job queue's records (make_lambda_handler)."""
    if "handler" not in _made:
        from sqsjobs.aws.lambda_ import make_lambda_handler

        _made["handler"] = make_lambda_handler(registry, store=SqsJobStore.from_env())
    return _made["handler"](event, context)


def reconcile(event: Any, context: Any) -> Any:
    """One reconciler pass (make_reconcile_handler)."""
    if "reconcile" not in _made:
        from sqsjobs.aws.lambda_ import make_reconcile_handler

        _made["reconcile"] = make_reconcile_handler(store=SqsJobStore.from_env())
    return _made["reconcile"](event, context)


def cron(event: Any, context: Any) -> Any:
    """Enqueue the registry's cron ticks due since the last minutes (make_cron_handler)."""
    if "cron" not in _made:
        from sqsjobs.aws.lambda_ import make_cron_handler

        crons = registry if isinstance(registry, JobRegistry) else None
        _made["cron"] = make_cron_handler(store=SqsJobStore.from_env(), registry=crons)
    return _made["cron"](event, context)
'''
