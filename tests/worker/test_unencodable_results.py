"""A handler result that cannot be encoded dead-letters its job like any unstorable result."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from sqsjobs import JobStatus, JobWorker

from .conftest import Env


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        (10 ** sys.get_int_max_str_digits(), "an int of more than"),
        ({"summary": "r\u00e9sum\u00e9 \ud800"}, "lone surrogate '\\ud800'"),
        ({"rows": [{"\udfff": 1}]}, "lone surrogate '\\udfff'"),
    ],
    ids=["huge-int", "surrogate", "surrogate-key"],
)
async def test_an_unencodable_result_is_a_payload_error_that_is_not_retried(
    env: Env, result: Any, reason: str
) -> None:
    job = (await env.queue.enqueue("report.build", {"tenant": "acme"})).job
    assert await JobWorker(env.queue, {"report.build": lambda ctx: result}).run_once()
    failed = await env.queue.get(job.id)
    assert failed is not None
    assert (failed.status, failed.attempts, failed.result) == (JobStatus.DEAD, 1, None)
    assert failed.last_error is not None
    assert failed.last_error.startswith("JobConfigError: Job result at $")
    assert reason in failed.last_error
    failed.last_error.encode()
