"""A completed job's ``last_error`` is an earlier attempt's: shown as history, not failure."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from rich.console import Console

from sqsjobs import Job, JobStatus
from sqsjobs.cli._render import job_detail, job_table

ERROR = "ConnectionResetError: imprimante « Zürich-3 » hors ligne"


def job(status: JobStatus, **fields: Any) -> Job:
    now = datetime.fromtimestamp(time.time(), UTC)
    return Job.model_validate(
        {
            "id": "5f1c2b7e9a0d4c3b8e6f1a2b3c4d5e6f",
            "queue": "default",
            "name": "label.print",
            "payload": {"printer": "Zürich-3"},
            "status": status,
            "attempts": 2,
            "max_attempts": 5,
            "run_at": now,
            "created_at": now,
            "updated_at": now,
            "lease_until": None,
            "locked_by": None,
            "lease_token": None,
            "lease": 30.0,
            "timeout": 30.0,
            "priority": 0,
            "idempotency_key": None,
            "tenant": None,
            "last_error": ERROR,
            "completed_at": now if status is JobStatus.COMPLETED else None,
            "result": "printed" if status is JobStatus.COMPLETED else None,
            **fields,
        }
    )


def shown(renderable: Any) -> str:
    console = Console(width=140, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_a_completed_jobs_error_is_marked_as_an_earlier_attempts() -> None:
    completed, delayed = job(JobStatus.COMPLETED), job(JobStatus.DELAYED)
    listing = shown(job_table("Jobs", [completed]))
    assert "earlier: ConnectionResetError" in listing
    assert "earlier:" not in shown(job_table("Jobs", [delayed]))
    assert "(an earlier attempt's: it completed)" in shown(job_detail(completed))
    assert "earlier attempt" not in shown(job_detail(delayed))
    assert ERROR in shown(job_detail(delayed))
