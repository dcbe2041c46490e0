"""``sqsjobs workers``: a real ``sqsjobs worker`` process is listed while it runs, not after.

The worker runs as ECS runs it, in a process of its own, and stops on SIGTERM; its long
polls last a second (``SQSJOBS_WAIT_TIME=1`` in ``cli_env``), so the stop is quick.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import time

from sqsjobs import __version__
from sqsjobs.aws import SqsJobStore
from sqsjobs.core.presence import PRESENCE_TTL, WorkerPresence
from sqsjobs.core.times import utc

from .conftest import Env, invoke, wait_until
from .test_worker_drain import Worker


def listed(env: Env) -> list[dict[str, object]]:
    result = invoke(env, "workers", "--json")
    assert result.exit_code == 0, result.output
    found: list[dict[str, object]] = json.loads(result.stdout)
    return found


def test_a_worker_process_is_listed_while_it_runs_and_gone_once_stopped(cli_env: Env) -> None:
    none = invoke(cli_env, "workers")
    assert none.exit_code == 0, none.output
    assert none.stdout.startswith("No worker is alive: none wrote its presence record in the")
    assert listed(cli_env) == []

    worker = Worker(cli_env, "--reconcile-every", "0", "--concurrency", "2")
    try:
        worker_id = worker.wait_for("jobs.worker.started")["worker_id"]
        wait_until(lambda: bool(listed(cli_env)), what="the worker's presence record")
        (record,) = listed(cli_env)
        table = invoke(cli_env, "workers")
        code = worker.end(signal.SIGTERM)
    finally:
        worker.close()
    assert code == 0, worker.lines
    assert (record["worker_id"], record["version"], record["queues"]) == (
        worker_id,
        __version__,
        ["default"],
    )
    assert (record["host"], record["pid"]) == (socket.gethostname(), worker.process.pid)
    assert (record["names"], record["concurrency"], record["running"]) == (["note", "sleep"], 2, 0)
    assert set(record) >= {"started_at", "heartbeat_at", "expires_at", "last_claim_at"}
    assert table.exit_code == 0, table.output
    row = next(line for line in table.stdout.splitlines() if str(worker_id) in line)
    assert __version__ in row and "default" in row and "never" in row
    assert f"1 worker alive, all on sqsjobs {__version__}" in table.stdout
    # A clean stop ends the record at once: no 90 s of a ghost.
    assert listed(cli_env) == []
    assert invoke(cli_env, "workers").stdout.startswith("No worker is alive")


def test_the_summary_counts_each_release_in_the_fleet(cli_env: Env, store: SqsJobStore) -> None:
    now = time.time()
    for n, version in enumerate(["0.3.0", "0.3.0", "0.2.9"]):
        store.sync.put_presence(
            WorkerPresence(
                worker_id=f"worker-{n}",
                host=f"ip-10-0-0-{n}",
                pid=100 + n,
                version=version,
                queues=("default",),
                names=("report.build",),
                concurrency=4,
                running=n,
                started_at=utc(now - 3_700),
                heartbeat_at=utc(now - 5),
                expires_at=utc(now - 5 + PRESENCE_TTL),
                last_claims={"default": utc(now - 12)},
            )
        )
    result = invoke(cli_env, "workers")
    assert result.exit_code == 0, result.output
    assert "3 workers alive on 2 releases of sqsjobs: 2 on 0.3.0, 1 on 0.2.9" in result.stdout
    row = next(line for line in result.stdout.splitlines() if "worker-2" in line)
    cells = [cell.strip() for cell in row.strip("│").split("│")]
    assert cells[:6] == ["worker-2", "ip-10-0-0-2", "0.2.9", "default", "4", "2"]
    # started, last claim, heartbeat: 3,700 s, 12 s and 5 s before (a slow run adds seconds)
    assert cells[6] == "1h 01m ago", cells
    assert re.fullmatch(r"1[2-9]s ago", cells[7]) and re.fullmatch(r"[5-9]s ago", cells[8]), cells


def test_at_80_columns_who_and_their_work_are_two_tables_with_whole_headers(
    cli_env: Env, store: SqsJobStore
) -> None:
    now = time.time()
    store.sync.put_presence(
        WorkerPresence(
            worker_id="worker-3f9c2a7d41e0",
            host="ip-10-0-3-17.eu-west-1.compute.internal",
            pid=4242,
            version="0.3.0",
            queues=("default", "reports"),
            names=("report.build",),
            concurrency=16,
            running=16,
            started_at=utc(now - 86_400 * 3),
            heartbeat_at=utc(now - 29),
            expires_at=utc(now - 29 + PRESENCE_TTL),
        )
    )
    result = invoke({**cli_env, "COLUMNS": "80"}, "workers")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    who, work = result.stdout.split("Their work (times: how long ago)")
    assert "│ worker-3f9c2a7d41e0 │" in who and "│ worker-3f9c2a7d41e0 │" in work
    assert "┃ worker              ┃ concurrency ┃ running ┃ started ┃ claim ┃ heartbeat ┃" in work
    row = next(line for line in work.splitlines() if "worker-3f9c2a7d41e0" in line)
    cells = [cell.strip() for cell in row.strip("│").split("│")]
    assert cells[1:5] == ["16", "16", "3d 00h", "never"]
