"""The built wheel in fresh virtual environments: the base install and the worker extra.

One wheel is built per module and installed twice: plain (what producers and Lambda
functions install) and with ``[worker]``. Installing fetches the dependencies from the
package index, so these tests take tens of seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sqsjobs.aws import SqsJobStore
from tests.aws.emulator import unique_prefix

from .conftest import LOCAL_PACKAGES, WORKER_PACKAGES, child_environment
from .test_license import wheel_licence
from .test_missing_extras import COMMAND_LINE

ROOT = Path(__file__).resolve().parents[2]
BASE_SCRIPT = Path(__file__).with_name("base_install.py")
BASE_PACKAGES = ("pydantic", "boto3", "botocore")
INSTALL_TIMEOUT = 240

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2 * INSTALL_TIMEOUT)]


def run(*argv: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_environment(),
        cwd=Path(argv[0]).parent,
    )


def checked(completed: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert completed.returncode == 0, completed.stderr
    return completed


def fresh_environment(where: Path, *requirements: str) -> Path:
    """A new virtual environment with ``requirements`` installed; returns its bin directory.

    The environment is made without pip, and this interpreter's pip installs into it,
    so the environment holds exactly the package and what it needs.
    """
    checked(run(sys.executable, "-m", "venv", "--without-pip", where))
    bin_dir = where / "bin"
    pip = (sys.executable, "-m", "pip", "--python", bin_dir / "python")
    checked(run(*pip, "install", "--quiet", *requirements, timeout=INSTALL_TIMEOUT))
    return bin_dir


@pytest.fixture(scope="module")
def base(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_environment(tmp_path_factory.mktemp("base") / "venv", str(wheel))


@pytest.fixture(scope="module")
def worker(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_environment(tmp_path_factory.mktemp("worker") / "venv", f"{wheel}[worker]")


def installed(bin_dir: Path) -> set[str]:
    """The distributions installed in an environment, by normalised name."""
    script = (
        "import importlib.metadata as m, json\n"
        "print(json.dumps(sorted({d.metadata['Name'].lower() for d in m.distributions()})))"
    )
    return set(json.loads(checked(run(bin_dir / "python", "-c", script)).stdout))


def test_the_base_install_has_none_of_the_extras_packages(base: Path) -> None:
    present = installed(base)
    assert set(BASE_PACKAGES) | {"sqsjobs"} <= present
    assert present & {*WORKER_PACKAGES, *LOCAL_PACKAGES, "tzdata"} == set()


def test_the_base_install_enqueues_and_runs_a_lambda_handler(base: Path, aws_endpoint: str) -> None:
    store = SqsJobStore.create(
        unique_prefix(), queues=("default", "reports"), endpoint_url=aws_endpoint
    )
    store.close()
    resources = {
        "endpoint": aws_endpoint,
        "table": store.table_name,
        "queues": dict(store.queue_urls),
    }
    completed = checked(run(base / "python", BASE_SCRIPT, json.dumps(resources)))
    *metric_lines, last = completed.stdout.splitlines()
    # The Lambda handler writes its run's metrics as EMF lines by default: no extra needed.
    assert metric_lines and all("_aws" in json.loads(line) for line in metric_lines)
    assert json.loads(last) == {
        "reply": {"batchItemFailures": []},
        "status": "completed",
        "result": 25.12,
        "async_status": "queued",
        "loaded": [],
    }


def test_the_base_install_command_says_which_extra_to_install(base: Path) -> None:
    completed = run(base / "sqsjobs", "--help")
    assert (completed.returncode, completed.stdout, completed.stderr) == (2, "", COMMAND_LINE)


def test_the_worker_extra_runs_the_worker_command(worker: Path) -> None:
    completed = checked(run(worker / "sqsjobs", "worker", "--help"))
    assert completed.stdout.startswith("Usage: sqsjobs worker ")


def test_the_worker_extra_brings_the_worker_and_cron_but_not_the_emulator(worker: Path) -> None:
    present = installed(worker)
    assert {*WORKER_PACKAGES, "tzdata"} <= present
    assert present & set(LOCAL_PACKAGES) == set()
    script = (
        "from sqsjobs import Cron, JobWorker\n"
        "cron = Cron('*/15 * * * *', 'report.daily', timezone='Europe/Zurich')\n"
        "print(JobWorker.__name__, cron.name)"
    )
    assert checked(run(worker / "python", "-c", script)).stdout == "JobWorker report.daily\n"


@pytest.fixture(scope="module")
def cron(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_environment(tmp_path_factory.mktemp("cron") / "venv", f"{wheel}[cron]")


def test_the_cron_extra_brings_the_cron_parser_alone(cron: Path) -> None:
    """What a Lambda function that enqueues cron ticks installs: no worker, no CLI."""
    present = installed(cron)
    assert {"croniter", "tzdata"} <= present
    assert present & {*WORKER_PACKAGES, *LOCAL_PACKAGES} == {"croniter"}
    script = (
        "from sqsjobs import Cron, JobRegistry\n"
        "from sqsjobs.aws import SqsJobStore\n"
        "from sqsjobs.aws.lambda_ import make_cron_handler\n"
        "registry = JobRegistry()\n"
        "registry.cron('0 3 * * *', 'reports.nightly', timezone='Europe/Zurich')\n"
        "store = SqsJobStore(table_name='jobs', region_name='eu-central-2', queue_urls={\n"
        "    'default': 'https://sqs.eu-central-2.amazonaws.com/123456789012/jobs'})\n"
        "make_cron_handler(store=store, registry=registry, crons=[Cron('*/5 * * * *', 'a')])\n"
        "print(len(registry.crons))"
    )
    assert checked(run(cron / "python", "-c", script)).stdout == "1\n"


def test_the_wheel_carries_the_dashboards_templates_and_static_files(wheel: Path) -> None:
    dashboard = ROOT / "src" / "sqsjobs" / "contrib" / "dashboard"
    data = [
        path
        for folder in ("templates", "static")
        for path in (dashboard / folder).iterdir()
        if path.is_file()
    ]
    expected = {str(path.relative_to(ROOT / "src")) for path in data}
    assert {"sqsjobs/contrib/dashboard/static/htmx.min.js"} <= expected
    assert "sqsjobs/contrib/dashboard/templates/base.html" in expected
    with zipfile.ZipFile(wheel) as built:
        assert expected <= set(built.namelist())


def test_the_wheel_pip_builds_carries_the_license(wheel: Path) -> None:
    assert wheel_licence(wheel) == ((ROOT / "LICENSE").read_text(), "MIT")


def test_the_worker_extra_alone_says_which_extra_the_dashboard_needs(worker: Path) -> None:
    completed = run(worker / "sqsjobs", "dashboard", "--port", "0")
    assert completed.returncode == 1
    assert completed.stderr == (
        "error: the dashboard needs the dashboard extra: pip install 'sqsjobs[dashboard]' "
        "(uvicorn is not installed)\n"
    )
