"""The lowest aiobotocore the worker extra allows, in a fresh environment.

The development environment resolves the newest releases in every declared range (that
is the upper end, which the rest of the suite runs on). Here a wheel of this tree is
installed with ``[worker]`` and the lowest aiobotocore (and botocore, boto3) its range
admits, beside the aioboto3 release that pins that aiobotocore; each async path then runs
jobs against the session's emulator (``range_smoke.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sqsjobs.aws import SqsJobStore
from tests.aws.emulator import unique_prefix

from .test_wheel import INSTALL_TIMEOUT, checked, fresh_environment, run

LOWEST = ("aiobotocore==2.25.0", "aioboto3==15.4.0")
SMOKE = Path(__file__).with_name("range_smoke.py")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2 * INSTALL_TIMEOUT)]


@pytest.fixture(scope="module")
def lowest(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fresh_environment(tmp_path_factory.mktemp("lowest") / "venv", f"{wheel}[local]", *LOWEST)


def test_the_lowest_aiobotocore_runs_every_async_path(lowest: Path, aws_endpoint: str) -> None:
    store = SqsJobStore.create(unique_prefix(), endpoint_url=aws_endpoint)
    store.close()
    queues = dict(store.queue_urls)
    resources = {"endpoint": aws_endpoint, "table": store.table_name, "queues": queues}
    completed = checked(run(lowest / "python", SMOKE, json.dumps(resources)))
    found = json.loads(completed.stdout.splitlines()[-1])
    assert found["aiobotocore"] == "2.25.0"
    assert found["default"] == ["completed"] * 3 and found["default_updates_seen"] == 6
    assert found["lean"] == ["completed"] * 3 and found["lean_warnings"] == []
    assert "update_item" in found["lean_routes"]
    assert found["aioboto3"] == ["completed"] * 2 and found["aioboto3_updates_seen"] == 4
