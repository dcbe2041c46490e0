"""``sqsjobs infra package``: a Lambda zip of an application's jobs, for the target only.

Offline: pip installs from a wheelhouse made of this environment's own distributions
(``tests/infra/wheelhouse.py``), which are wheels for this interpreter and platform, so
the package is built for them (``--python`` and ``--arch`` of the host). Asking for the
other architecture then fails: proof that the build machine's wheels are never taken for
another platform's.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from sqsjobs import __version__
from sqsjobs.cli import main
from sqsjobs.infra._archive import HANDLER_MODULE, ZIP_TIME

from .wheelhouse import make_wheelhouse

# pip runs for real on these: seconds per build (the wheelhouse is made once a session).
SLOW = pytest.mark.slow
HOST_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
HOST_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}[
    platform.machine().lower()
]
OTHER_ARCH = {"x86_64": "arm64", "arm64": "x86_64"}[HOST_ARCH]
MACHINE = {"x86_64": "x86_64", "arm64": "aarch64"}
JOBS = """\
from sqsjobs import JobContext, JobRegistry

registry = JobRegistry()


@registry.handler("reports.nightly")
async def nightly(ctx: JobContext) -> str:
    return "done"


registry.cron("0 3 * * *", "reports.nightly")
"""


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The directory of wheels, and sqsjobs's own wheel in it."""
    folder = tmp_path_factory.mktemp("wheelhouse")
    return folder, make_wheelhouse(folder, {"cron"})


@pytest.fixture(scope="session")
def app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An application: package ``shop`` with its registry, and files that stay out."""
    root = tmp_path_factory.mktemp("app")
    (root / "shop" / "__pycache__").mkdir(parents=True)
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "jobs.py").write_text(JOBS)
    (root / "shop" / "__pycache__" / "jobs.cpython-311.pyc").write_bytes(b"\0stale")
    (root / "shop" / ".env").write_text("SECRET=1\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_shop.py").write_text("")
    (root / "requirements.txt").write_text("six>=1.5\n")
    return root


def package(*args: str, source: Path) -> Result:
    runner = CliRunner()
    return runner.invoke(
        main, ["infra", "package", "--source", str(source), *args], catch_exceptions=False
    )


def offline(wheelhouse: tuple[Path, Path], arch: str = HOST_ARCH) -> list[str]:
    folder, wheel = wheelhouse
    return [
        *("--python", HOST_PYTHON, "--arch", arch, "--no-index"),
        *("--find-links", str(folder), "--sqsjobs-from", str(wheel)),
    ]


@pytest.fixture(scope="session")
def built(
    wheelhouse: tuple[Path, Path], app: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, Result]:
    """The package, built twice from the same inputs."""
    out = tmp_path_factory.mktemp("out")
    results = []
    for name in ("first.zip", "second.zip"):
        args = ["--registry", "shop.jobs:registry", "--out", str(out / name), "-r"]
        args.append(str(app / "requirements.txt"))
        result = package(*args, *offline(wheelhouse), source=app)
        assert result.exit_code == 0, result.output
        results.append(result)
    return out / "first.zip", out / "second.zip", results[0]


@SLOW
def test_the_command_says_what_it_wrote_and_the_handlers_to_set(
    built: tuple[Path, Path, Result],
) -> None:
    first, _, result = built
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Wrote {first}: ")
    assert " MB zipped, " in lines[0]
    assert lines[0].endswith(f"sqsjobs {__version__} for python{HOST_PYTHON} on {HOST_ARCH}")
    handlers = [line.split()[1] for line in lines[1:]]
    assert handlers == [f"{HANDLER_MODULE}.{entry}" for entry in ("handler", "reconcile", "cron")]


@SLOW
def test_every_distribution_in_the_zip_is_a_wheel_for_the_target(
    built: tuple[Path, Path, Result],
) -> None:
    first, _, _ = built
    python = f"cp{HOST_PYTHON.replace('.', '')}"
    with zipfile.ZipFile(first) as archive:
        wheels = {
            name.split("/")[0]: archive.read(name).decode()
            for name in archive.namelist()
            if name.endswith(".dist-info/WHEEL")
        }
    assert {name.split("-")[0] for name in wheels} >= {"sqsjobs", "boto3", "botocore", "croniter"}
    compiled = 0
    for name, text in wheels.items():
        tags = [
            line.removeprefix("Tag: ").split("-")
            for line in text.splitlines()
            if line.startswith("Tag: ")
        ]
        assert tags, name
        for interpreter, _abi, place in tags:
            assert place == "any" or (
                place.startswith("manylinux") and place.endswith(f"_{MACHINE[HOST_ARCH]}")
            ), (name, place)
            assert interpreter in (python, "py3", "py2"), (name, interpreter)
        assert any(t[0] in (python, "py3") for t in tags), name
        compiled += any(t[2] != "any" for t in tags)
    assert compiled >= 1  # pydantic-core


@SLOW
def test_the_zip_holds_the_application_package_and_nothing_else_of_its_directory(
    built: tuple[Path, Path, Result],
) -> None:
    first, _, _ = built
    with zipfile.ZipFile(first) as archive:
        names = archive.namelist()
        infos = archive.infolist()
    assert [n for n in names if n.startswith("shop/")] == ["shop/__init__.py", "shop/jobs.py"]
    assert f"{HANDLER_MODULE}.py" in names
    assert not [n for n in names if n.startswith(("tests/", "bin/", "requirements"))]
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", "direct_url.json"))]
    assert names == sorted(names)
    assert {info.date_time for info in infos} == {ZIP_TIME}


@SLOW
def test_the_zip_is_the_same_bytes_when_built_again(built: tuple[Path, Path, Result]) -> None:
    first, second, _ = built
    assert first.read_bytes() == second.read_bytes()


CHECK = """
import json, sys
sys.path[:0] = [sys.argv[1]]
import sqsjobs_lambda_handler as entry
from sqsjobs import JobConfigError
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_cron_handler
try:
    entry.handler({"detail-type": "Scheduled Event", "source": "aws.events"}, None)
except JobConfigError as refused:
    refusal = refused.code
crons = make_cron_handler(store=SqsJobStore.from_env(), registry=entry.registry)
import boto3, croniter, pydantic_core, sqsjobs
print(json.dumps({
    "refusal": refusal,
    "callable": [callable(getattr(entry, n)) for n in ("handler", "reconcile", "cron")],
    "crons": callable(crons),
    "files": [m.__file__ for m in (boto3, croniter, pydantic_core, sqsjobs)],
    "path": sys.path,
}))
"""


@SLOW
def test_the_handler_module_imports_in_a_clean_interpreter_from_the_zip_alone(
    built: tuple[Path, Path, Result], tmp_path: Path
) -> None:
    """Extracted, as Lambda does (zipimport loads no compiled extension), with ``-I -S``:
    no site-packages, no environment variable of Python's, nothing but the zip's files."""
    first, _, _ = built
    task = tmp_path / "task"
    with zipfile.ZipFile(first) as archive:
        archive.extractall(task)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "SQSJOBS_TABLE": "jobs",
        "SQSJOBS_QUEUES": "default=https://sqs.us-east-1.amazonaws.com/123456789012/jobs",
    }
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", CHECK, str(task)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    assert found["refusal"] == "invalid_event"  # the store was built; nothing was sent
    assert found["callable"] == [True, True, True]
    assert found["crons"] is True
    assert all(Path(f).is_relative_to(task) for f in found["files"]), found["files"]
    assert not [p for p in found["path"] if "site-packages" in p]


@SLOW
def test_another_architecture_fails_naming_its_platform_and_writes_nothing(
    wheelhouse: tuple[Path, Path], app: Path, tmp_path: Path
) -> None:
    out = tmp_path / "worker.zip"
    result = package(
        "--registry",
        "shop.jobs:registry",
        "--out",
        str(out),
        *offline(wheelhouse, OTHER_ARCH),
        source=app,
    )
    assert result.exit_code == 1
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith(
        f"error: pip could not get the dependencies for python{HOST_PYTHON} on {OTHER_ARCH}"
    )
    assert f"_{MACHINE[OTHER_ARCH]}" in error and "pydantic-core" in error
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--registry", "shop.jobs"], "--registry must be MODULE:REGISTRY"),
        (["--registry", "shop.jobs:"], "--registry must be MODULE:REGISTRY"),
        (["--registry", "shop/jobs:registry"], "--registry must be MODULE:REGISTRY"),
        (["--registry", "shop.tasks:registry"], "No module 'shop.tasks' under --source"),
        (["--registry", "billing.jobs:registry"], "No module 'billing.jobs' under --source"),
        (["--python", "3.10"], "Python '3.10' is not a Lambda runtime sqsjobs runs on"),
        (["--python", "3.9"], "choose one of 3.11, 3.12, 3.13, 3.14"),
        (["--arch", "mips"], "Invalid value for '--arch': 'mips' is not one of 'arm64', 'x86_64'"),
        (["--extra", "everything"], "Invalid value for '--extra'"),
    ],
)
def test_bad_usage_is_refused_before_anything_runs(
    app: Path, tmp_path: Path, args: list[str], said: str
) -> None:
    out = tmp_path / "worker.zip"
    defaults = {"--registry": "shop.jobs:registry"}
    given = dict(zip(args[::2], args[1::2], strict=True))
    options = [part for key, value in {**defaults, **given}.items() for part in (key, value)]
    result = package(*options, "--out", str(out), "--no-index", source=app)
    assert result.exit_code == 2, result.output
    assert said in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_sqsjobs_from_must_be_a_wheel_or_a_source_directory(app: Path, tmp_path: Path) -> None:
    out = tmp_path / "worker.zip"
    given = ["--sqsjobs-from", str(app / "requirements.txt")]
    result = package("--registry", "shop.jobs:registry", "--out", str(out), *given, source=app)
    assert result.exit_code == 2
    assert "--sqsjobs-from must be a wheel or a source directory" in result.stderr
    assert not out.exists()


def test_an_output_in_a_missing_directory_is_refused(app: Path, tmp_path: Path) -> None:
    out = tmp_path / "missing" / "worker.zip"
    result = package("--registry", "shop.jobs:registry", "--out", str(out), source=app)
    assert result.exit_code == 2
    assert "must be a file in an existing directory" in result.stderr
