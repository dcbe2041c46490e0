"""``jobs show`` of a failed job: the stack of the handler's failure, as the record keeps it."""

from __future__ import annotations

import json
from typing import Any

from sqsjobs import JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore

from .conftest import Env, invoke


def reserve_stock(order: dict[str, Any]) -> None:
    warehouse = {"lamp": 3}
    for line in order["lines"]:
        warehouse[line["sku"]] -= line["qty"]  # a sku the warehouse lacks: KeyError


async def test_show_prints_the_failed_handlers_traceback(cli_env: Env, store: SqsJobStore) -> None:
    queue = JobQueue(store)

    async def ship(payload: dict[str, Any]) -> None:
        reserve_stock(payload)

    order = {"lines": [{"sku": "lamp", "qty": 1}, {"sku": "schreibtisch-ü", "qty": 2}]}
    try:
        job = (await queue.enqueue("order.ship", order, max_attempts=1)).job
        assert await JobWorker(queue, {"order.ship": ship}).run_once()
    finally:
        await store.aclose()

    shown = invoke(cli_env, "jobs", "show", job.id)
    assert shown.exit_code == 0, shown.output
    trace = shown.stdout.split("\ntraceback\n", 1)[1].split("\npayload\n", 1)[0]
    lines = trace.split("\n")
    assert lines[0] == "Traceback (most recent call last):"
    assert "in ship" in lines[1] and "test_traceback.py" in lines[1]
    assert "in reserve_stock" in trace and 'warehouse[line["sku"]] -= line["qty"]' in trace
    assert lines[-1] == "KeyError: 'schreibtisch-ü'"
    assert "sqsjobs" not in trace  # the worker's own frames are left out

    as_json = json.loads(invoke(cli_env, "jobs", "show", job.id, "--json").stdout)
    assert as_json["status"] == JobStatus.DEAD
    assert as_json["last_traceback"] == trace
