"""The steps of ``sqsjobs infra package`` without pip: what pip is asked, which files of
the application and of pip's install go into the zip (pip is stood in for where a build
needs it; ``test_package`` runs it for real)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from sqsjobs import __version__
from sqsjobs.infra._archive import HANDLER_MODULE, installed_files
from sqsjobs.infra._package import (
    PackageRefused,
    PackageRequest,
    Target,
    build_package,
    module_root,
    pip_install,
)

MACHINE = {"x86_64": "x86_64", "arm64": "aarch64"}


@pytest.mark.parametrize(
    ("files", "module", "found"),
    [
        (["shop/__init__.py", "shop/jobs.py"], "shop.jobs", "shop"),
        (["shop/jobs.py"], "shop.jobs", "shop"),  # a namespace package
        (["shop/__init__.py", "shop/jobs/__init__.py"], "shop.jobs", "shop"),
        (["tasks.py"], "tasks", "tasks.py"),
        (["tasks.py", "tasks/__init__.py"], "tasks", "tasks"),  # Python imports the package
    ],
)
def test_the_module_s_top_level_package_or_module_is_what_is_copied(
    tmp_path: Path, files: list[str], module: str, found: str
) -> None:
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert module_root(tmp_path, module) == tmp_path / found


@pytest.mark.parametrize(
    ("python", "arch", "newest", "oldest"),
    [
        ("3.11", "arm64", "manylinux_2_26_aarch64", "manylinux_2_17_aarch64"),
        ("3.12", "arm64", "manylinux_2_34_aarch64", "manylinux_2_17_aarch64"),
        ("3.13", "x86_64", "manylinux_2_34_x86_64", "manylinux_2_5_x86_64"),
    ],
)
def test_pip_installs_wheels_of_the_target_runtime_s_platforms_only(
    python: str, arch: str, newest: str, oldest: str, tmp_path: Path
) -> None:
    request = PackageRequest(
        registry="shop.jobs:registry",
        out=tmp_path / "w.zip",
        target=Target.checked(python, arch),
        requirements=(tmp_path / "requirements.txt",),
        index_options=("--index-url", "https://pypi.example/simple"),
    )
    command = pip_install(request, f"sqsjobs[cron]=={__version__}", tmp_path / "t")
    assert command[:3] == [sys.executable, "-m", "pip"]
    platforms = [command[i + 1] for i, part in enumerate(command) if part == "--platform"]
    assert (platforms[0], platforms[-2], platforms[-1]) == (
        newest,
        oldest,
        f"manylinux2014_{MACHINE[arch]}",
    )
    joined = " ".join(command)
    assert f"--implementation cp --python-version {python} " in joined
    assert "--only-binary=:all: --no-compile --index-url https://pypi.example/simple -r " in joined
    assert command[-1] == f"sqsjobs[cron]=={__version__}"
    assert command[command.index("--target") + 1] == str(tmp_path / "t")


def test_an_application_package_named_as_a_dependency_is_refused(
    tmp_path: Path,
) -> None:
    """pip is stood in for: it installs a ``six`` module, the application's name too."""
    (tmp_path / "six").mkdir()
    (tmp_path / "six" / "__init__.py").write_text("registry = {}\n")

    def pip(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        target = Path(command[command.index("--target") + 1])
        (target / "sqsjobs-9.9.dist-info").mkdir(parents=True)
        (target / "sqsjobs-9.9.dist-info" / "METADATA").write_text("Name: sqsjobs\n")
        (target / "six.py").write_text("")
        return subprocess.CompletedProcess(command, 0, "", "")

    out = tmp_path / "out" / "w.zip"
    out.parent.mkdir()
    request = PackageRequest(registry="six:registry", out=out, source=tmp_path)
    with pytest.raises(PackageRefused, match="'six' has the name of a dependency's"):
        build_package(request, run=pip)
    assert list(out.parent.iterdir()) == []


def test_a_source_directory_is_built_into_a_wheel_first(tmp_path: Path) -> None:
    """pip is stood in for: ``--sqsjobs-from DIR`` asks pip for a wheel of DIR, then
    installs that wheel, by its file URL, with the extras."""
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "jobs.py").write_text("registry = {}\n")
    checkout = tmp_path / "sqsjobs-checkout"
    checkout.mkdir()
    commands: list[list[str]] = []

    def pip(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        commands.append(command)
        if "wheel" in command:
            folder = Path(command[command.index("--wheel-dir") + 1])
            folder.mkdir(parents=True)
            (folder / "sqsjobs-9.9-py3-none-any.whl").write_bytes(b"")
        else:
            target = Path(command[command.index("--target") + 1])
            (target / "sqsjobs-9.9.dist-info").mkdir(parents=True)
            (target / "sqsjobs-9.9.dist-info" / "METADATA").write_text("Name: sqsjobs\n")
        return subprocess.CompletedProcess(command, 0, "", "")

    out = tmp_path / "w.zip"
    request = PackageRequest(
        registry="shop.jobs:registry",
        out=out,
        source=tmp_path,
        extras=("tracing",),
        sqsjobs_from=checkout,
        index_options=("--no-index",),
    )
    built = build_package(request, run=pip)
    wheel, install = commands
    assert wheel[3:] == [
        *("--disable-pip-version-check", "--no-input", "wheel", "--no-deps", "--wheel-dir"),
        wheel[8],
        "--no-index",
        str(checkout),
    ]
    assert install[-1].startswith("sqsjobs[cron,tracing] @ file://")
    assert install[-1].endswith("/sqsjobs-wheel/sqsjobs-9.9-py3-none-any.whl")
    assert (built.sqsjobs_version, built.files) == ("9.9", 3)  # METADATA, jobs.py, handler
    with zipfile.ZipFile(out) as archive:
        assert archive.namelist() == [
            "shop/jobs.py",
            "sqsjobs-9.9.dist-info/METADATA",
            f"{HANDLER_MODULE}.py",
        ]


def test_what_would_differ_between_builds_or_name_the_build_machine_stays_out(
    tmp_path: Path,
) -> None:
    info = tmp_path / "sqsjobs-9.9.dist-info"
    (tmp_path / "bin").mkdir()
    (tmp_path / "sqsjobs" / "__pycache__").mkdir(parents=True)
    info.mkdir()
    (tmp_path / "bin" / "sqsjobs").write_text("#!/home/me/.venv/bin/python\n")
    (tmp_path / "sqsjobs" / "__init__.py").write_text("")
    (tmp_path / "sqsjobs" / "__pycache__" / "__init__.cpython-312.pyc").write_bytes(b"\0")
    (info / "direct_url.json").write_text('{"url": "file:///tmp/pip-1234/sqsjobs.whl"}')
    (info / "RECORD").write_text(
        "sqsjobs/__init__.py,sha256=x,0\n"
        "sqsjobs-9.9.dist-info/direct_url.json,,\n"
        "../../bin/sqsjobs,sha256=y,30\n"
    )
    found = installed_files(tmp_path)
    assert sorted(found) == ["sqsjobs-9.9.dist-info/RECORD", "sqsjobs/__init__.py"]
    record = found["sqsjobs-9.9.dist-info/RECORD"].data().decode()
    assert "direct_url" not in record and record.startswith("sqsjobs/__init__.py,")
