"""``sqsjobs jobs list``: jobs that ended newest first, open work oldest first, and the flags."""

from __future__ import annotations

import json
import re

from sqsjobs import SyncJobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import Env, invoke

ROW = re.compile(r"^│ (?P<id>[0-9a-f]{32}) │")


def ids(output: str) -> list[str]:
    return [m["id"] for line in output.splitlines() if (m := ROW.match(line))]


def some_jobs(store: SqsJobStore) -> tuple[list[str], list[str]]:
    """Five delayed jobs, the 1st, 2nd and 4th of them then cancelled; ids oldest first."""
    producer = SyncJobQueue(store)
    made = [
        producer.enqueue("email.send", {"to": f"zoë+{n}@example.com"}, delay=600).job.id
        for n in range(5)
    ]
    cancelled = [made[0], made[1], made[3]]
    for job_id in cancelled:
        assert producer.cancel(job_id)
    return made, cancelled


def test_ended_jobs_are_listed_newest_first_unless_told(cli_env: Env, store: SqsJobStore) -> None:
    made, cancelled = some_jobs(store)

    ended = invoke(cli_env, "jobs", "list", "--status", "cancelled")
    assert ended.exit_code == 0, ended.output
    assert ids(ended.stdout) == cancelled[::-1]
    assert "Jobs (cancelled) in every queue, newest first" in ended.stdout
    oldest = invoke(cli_env, "jobs", "list", "--status", "cancelled", "--oldest")
    assert ids(oldest.stdout) == cancelled
    assert "Jobs (cancelled) in every queue, oldest first" in oldest.stdout

    mixed = invoke(cli_env, "jobs", "list", "-s", "cancelled", "-s", "delayed")
    assert ids(mixed.stdout) == made  # open work among them: the order it will run in
    assert ids(invoke(cli_env, "jobs", "list").stdout) == made
    newest = invoke(cli_env, "jobs", "list", "--newest")
    assert ids(newest.stdout) == made[::-1]
    assert "Jobs in every queue, newest first" in newest.stdout


def test_newest_first_pages_through_every_job(cli_env: Env, store: SqsJobStore) -> None:
    made, cancelled = some_jobs(store)

    first = invoke(cli_env, "jobs", "list", "-s", "cancelled", "-s", "dead", "--limit", "2")
    assert ids(first.stdout) == cancelled[:0:-1]
    assert "Showing the newest 2; raise --limit (up to 1000) or pass --all." in first.stdout
    every = invoke(cli_env, "jobs", "list", "--newest", "--all", "--limit", "2")
    assert every.exit_code == 0, every.output
    assert ids(every.stdout) == made[::-1]
    assert every.stdout.rstrip().endswith("5 job(s)")
    listed = invoke(cli_env, "jobs", "list", "-s", "cancelled", "--all", "--limit", "2", "--json")
    assert [job["id"] for job in json.loads(listed.stdout)] == cancelled[::-1]
    assert "--newest / --oldest" in invoke(cli_env, "jobs", "list", "--help").stdout
