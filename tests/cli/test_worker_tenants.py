"""``sqsjobs worker --tenant-concurrency N``: the per-tenant cap reaches the worker."""

from __future__ import annotations

from typing import Any

import pytest

from sqsjobs.cli import _worker

from .conftest import Env, invoke

REGISTRY = "tests.cli.handlers:registry"


class Built(Exception):
    """Raised by the stand-in worker: what it was built with, and the end of the command."""


def test_the_cap_is_passed_to_the_worker(cli_env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def worker(*args: Any, **options: Any) -> None:
        seen.update(options)
        raise Built

    monkeypatch.setattr(_worker, "JobWorker", worker)
    result = invoke(cli_env, "worker", REGISTRY, "--concurrency", "8", "--tenant-concurrency", "2")
    assert result.exit_code == 1 and "Built" in result.stderr  # the stand-in ended it
    assert (seen["concurrency"], seen["tenant_concurrency"]) == (8, 2)


def test_a_cap_below_one_exits_2(cli_env: Env) -> None:
    result = invoke(cli_env, "worker", REGISTRY, "--tenant-concurrency", "0")
    assert result.exit_code == 2
    assert "--tenant-concurrency" in result.stderr and "1<=x<=1000" in result.stderr


def test_the_help_names_the_cap(cli_env: Env) -> None:
    result = invoke(cli_env, "worker", "--help")
    assert "--tenant-concurrency" in result.stdout
