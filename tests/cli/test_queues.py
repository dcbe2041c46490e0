"""``sqsjobs queues pause|resume|list``: the fleet's pause, from the command line."""

from __future__ import annotations

import json

from sqsjobs import SyncJobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import Env, invoke


def listed(env: Env) -> dict[str, dict[str, object]]:
    result = invoke(env, "queues", "list", "--json")
    assert result.exit_code == 0, result.output
    return {row["queue"]: row for row in json.loads(result.stdout)}


def test_a_pause_holds_the_queue_and_shows_in_the_list_until_resumed(
    cli_env: Env, store: SqsJobStore
) -> None:
    queue = SyncJobQueue(store)
    queue.enqueue("report.build", {"monat": "2026-11", "für": "Zoë"})
    paused = invoke(cli_env, "queues", "pause", "default")
    assert paused.exit_code == 0, paused.output
    assert paused.stdout.startswith("Paused queue default: within seconds no worker")
    assert queue.paused() == frozenset({"default"})  # what every worker reads
    rows = listed(cli_env)
    assert rows["default"]["paused"] is True and rows["default"]["messages"] == 1
    assert str(rows["default"]["paused_at"]).endswith("+00:00")
    assert rows["default"]["oldest_queued_at"] is not None
    table = invoke(cli_env, "queues", "list")
    assert table.exit_code == 0, table.output
    line = next(row for row in table.stdout.splitlines() if "default" in row)
    assert "paused" in line and "ago" in line
    resumed = invoke(cli_env, "queues", "resume", "default")
    assert resumed.exit_code == 0, resumed.output
    assert queue.paused() == frozenset()
    assert listed(cli_env)["default"]["paused"] is False


def test_an_unknown_queue_is_bad_usage_and_pauses_nothing(cli_env: Env, store: SqsJobStore) -> None:
    result = invoke(cli_env, "queues", "pause", "invoices")
    assert result.exit_code == 2
    assert "Queue 'invoices' has no SQS queue in this store" in result.output
    assert SyncJobQueue(store).paused() == frozenset()
