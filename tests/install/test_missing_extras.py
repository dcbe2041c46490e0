"""Without the worker extra: the producer and Lambda paths import, the rest says what to install.

Each script runs in this environment with the extra's packages made unimportable, the way
a base install lacks them (``test_wheel.py`` checks a real base install).
"""

from __future__ import annotations

import pytest

from .conftest import EXTRA_HINT, LOCAL_PACKAGES, WORKER_PACKAGES, run_without

COMMAND_LINE = f"sqsjobs: the command line needs the worker extra: {EXTRA_HINT}\n"


def test_the_producer_and_lambda_paths_import_without_the_extras() -> None:
    completed = run_without(
        WORKER_PACKAGES + LOCAL_PACKAGES,
        "import sqsjobs\n"
        "from sqsjobs import JobQueue, JobRegistry, MemoryJobStore, SyncJobQueue\n"
        "from sqsjobs.aws import SqsJobStore\n"
        "from sqsjobs.aws.lambda_ import make_lambda_handler, make_reconcile_handler\n"
        "from sqsjobs.aws.lambda_ import make_cron_handler\n"
        "print('imported')",
    )
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, "imported\n", "")


@pytest.mark.parametrize(
    ("name", "extra"), [("Cron", "cron"), ("JobWorker", "worker"), ("WorkerState", "worker")]
)
def test_a_worker_name_without_croniter_names_the_extra(name: str, extra: str) -> None:
    completed = run_without(
        ("croniter",),
        f"try:\n    from sqsjobs import {name}\n"
        "except ImportError as error:\n    print(type(error).__name__, error.name, error)\n",
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == (
        f"ImportError croniter sqsjobs.{name} needs the {extra} extra "
        f"(croniter is not installed): pip install 'sqsjobs[{extra}]'\n"
    )


def test_declaring_a_cron_without_croniter_names_the_cron_extra() -> None:
    """A registry with crons still imports on the base install; declaring one says why not."""
    completed = run_without(
        ("croniter",),
        "from sqsjobs import JobConfigError, JobRegistry\n"
        "from sqsjobs.aws import SqsJobStore\n"
        "from sqsjobs.aws.lambda_ import make_cron_handler\n"
        "store = SqsJobStore(table_name='jobs', region_name='eu-central-1', queue_urls={\n"
        "    'default': 'https://sqs.eu-central-1.amazonaws.com/123456789012/jobs'})\n"
        "for declare in (\n"
        "    lambda: JobRegistry().cron('0 3 * * *', 'reports.nightly'),\n"
        "    lambda: make_cron_handler(store=store, registry=JobRegistry()),\n"
        "):\n"
        "    try:\n        declare()\n"
        "    except JobConfigError as error:\n        print(error.code, error)\n",
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == 2 * [
        "invalid_option Cron schedules need the cron parser (croniter is not installed): "
        "pip install 'sqsjobs[cron]'"
    ]


def test_a_missing_module_of_sqsjobs_itself_is_not_blamed_on_the_extra() -> None:
    completed = run_without(("sqsjobs.cron.schedule",), "from sqsjobs import Cron")
    assert completed.returncode == 1
    assert completed.stderr.splitlines()[-1] == (
        "ModuleNotFoundError: import of sqsjobs.cron.schedule halted; None in sys.modules"
    )


# Each command loads its own module when it runs: the package is one that command needs.
@pytest.mark.parametrize(
    ("package", "command"), [("click", "worker"), ("rich", "jobs"), ("croniter", "worker")]
)
def test_the_command_without_its_extra_prints_one_line_and_exits_2(
    package: str, command: str
) -> None:
    completed = run_without(
        (package,),
        f"sys.argv = ['sqsjobs', {command!r}, '--help']\n"
        "from sqsjobs.__main__ import main\nraise SystemExit(main())",
    )
    assert (completed.returncode, completed.stdout, completed.stderr) == (2, "", COMMAND_LINE)


def test_the_command_with_its_extra_runs_the_command_line() -> None:
    completed = run_without(
        (),
        "sys.argv = ['sqsjobs', 'worker', '--help']\n"
        "from sqsjobs.__main__ import main\nraise SystemExit(main())",
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("Usage: sqsjobs worker ")


def test_the_command_does_not_hide_a_missing_module_of_its_own() -> None:
    completed = run_without(
        ("sqsjobs.cli._demo",),
        "sys.argv = ['sqsjobs', 'demo', '--help']\n"
        "from sqsjobs.__main__ import main\nraise SystemExit(main())",
    )
    assert completed.returncode == 1
    assert completed.stderr.splitlines()[-1] == (
        "ModuleNotFoundError: import of sqsjobs.cli._demo halted; None in sys.modules"
    )


@pytest.mark.parametrize("package", ["starlette", "jinja2"])
def test_the_dashboard_without_its_extra_names_it(package: str) -> None:
    completed = run_without(
        (package,),
        "try:\n    from sqsjobs.contrib.dashboard import make_dashboard\n"
        "except ImportError as error:\n    print(type(error).__name__, error.name, error)\n",
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == (
        f"ImportError {package} sqsjobs.contrib.dashboard needs the dashboard extra "
        f"({package} is not installed): pip install 'sqsjobs[dashboard]'\n"
    )


def test_the_dashboard_command_without_its_extra_names_it() -> None:
    completed = run_without(
        ("jinja2",),
        "import sys\nfrom sqsjobs.cli import main\n"
        "sys.argv = ['sqsjobs', 'dashboard', '--port', '0']\nmain()\n",
    )
    assert completed.returncode == 1
    assert completed.stderr == (
        "error: the dashboard needs the dashboard extra: pip install 'sqsjobs[dashboard]' "
        "(jinja2 is not installed)\n"
    )
