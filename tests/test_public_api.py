"""The import paths users rely on: the package root's names, and what importing it costs."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sqsjobs

# Every name SPEC §2 makes importable from the package root.
SPEC_NAMES = {
    "Backoff",
    "Cron",
    "EnqueueRequest",
    "EnqueueResult",
    "Handler",
    "Job",
    "JobBatchError",
    "JobConfigError",
    "JobContext",
    "JobError",
    "JobFatalError",
    "JobFilter",
    "JobIdempotencyConflictError",
    "JobPage",
    "JobQueue",
    "JobRegistry",
    "JobStatus",
    "JobStore",
    "JobTimeoutError",
    "JobWorker",
    "MemoryJobStore",
    "SyncJobQueue",
    "WorkerState",
    "compute_backoff",
    "job_idempotency_key",
}

HEAVY = ("aioboto3", "aiobotocore", "aiohttp", "click", "rich")


def test_all_is_sorted() -> None:
    assert sqsjobs.__all__ == sorted(sqsjobs.__all__)


def test_all_has_no_repeats() -> None:
    assert len(set(sqsjobs.__all__)) == len(sqsjobs.__all__)


def test_all_names_every_spec_name() -> None:
    assert SPEC_NAMES - set(sqsjobs.__all__) == set()


@pytest.mark.parametrize("name", sorted(SPEC_NAMES))
def test_spec_names_resolve(name: str) -> None:
    assert getattr(sqsjobs, name) is not None


def test_every_exported_name_exists() -> None:
    assert [name for name in sqsjobs.__all__ if not hasattr(sqsjobs, name)] == []


def test_errors_keep_their_spec_codes() -> None:
    assert issubclass(sqsjobs.JobConfigError, ValueError)
    assert sqsjobs.JobIdempotencyConflictError.code == "idempotency_conflict"
    assert sqsjobs.JobFatalError.code == "fatal"
    assert sqsjobs.JobTimeoutError.code == "timeout"


@pytest.mark.parametrize(
    "statement",
    [
        "import sqsjobs",
        "from sqsjobs import SyncJobQueue, MemoryJobStore",
        "from sqsjobs.aws import SqsJobStore",
    ],
)
def test_importing_the_package_loads_no_async_aws_or_cli_dependencies(statement: str) -> None:
    script = (
        f"import sys\n{statement}\n"
        f"print(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert completed.stdout.strip() == ""


def test_a_jobs_history_entries_are_a_public_model_beside_job() -> None:
    """``Job.history`` holds ``HistoryEntry`` values (SPEC §8), importable like ``Job``."""
    from sqsjobs.core.history import HistoryEntry

    assert sqsjobs.HistoryEntry is HistoryEntry
    assert "HistoryEntry" in sqsjobs.__all__
    assert sqsjobs.Job.model_fields["history"].annotation == list[HistoryEntry]
    assert HistoryEntry.model_config.get("frozen") is True
