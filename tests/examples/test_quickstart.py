"""The tutorial's Quick start, run as a reader runs it, and its jobs read back from the store.

Its blocks run in order in one directory: the ``app`` modules, the producer script, the
``sqsjobs worker`` command, then the asyncio program. Each worker serves until the
session's jobs have ended and then drains on SIGTERM, exiting 0. The asyncio program is
given a job of its own first, so that it too is seen running one. This stays in the fast
tier: the whole path takes seconds.
"""

from __future__ import annotations

from collections.abc import Callable

from sqsjobs import JobStatus, SyncJobQueue

from .blocks import sections
from .session import Session

SECTION = "docs/tutorial/first-job.md: Quick start"
LATE = {"to": "bo@example.com", "name": "Bo"}


def test_the_quick_start_runs_and_its_jobs_complete(session: Callable[[], Session]) -> None:
    blocks = [block for block in sections()[SECTION] if not block.not_run]
    run = session()
    printed: list[str] = []
    late: list[str] = []
    for block in blocks:
        if block.serves:
            with run.store() as store:
                late.append(SyncJobQueue(store).enqueue("email.welcome", LATE).job.id)
        printed.append(run.run(block))
    with run.store() as store:
        queue = SyncJobQueue(store)
        jobs = {job.id: job for job in run.jobs(queue)}
        producer = [line.split() for out in printed for line in out.splitlines()]
        welcome = next(words[0] for words in producer if words[1:] in (["False"], ["True"]))
        jobs[welcome] = queue.get(welcome) or jobs[welcome]
    assert {job.status for job in jobs.values()} == {JobStatus.COMPLETED}, [
        (job.name, job.status, job.last_error) for job in jobs.values()
    ]
    assert {job.name for job in jobs.values()} == {"email.welcome", "invoice.charge"}
    result = jobs[welcome].result
    assert isinstance(result, dict) and list(result) == ["message_id"], jobs[welcome]
    assert late and set(late) <= set(jobs), "the asyncio program ran no job of its own"
    assert len(late) == 1 and len(blocks) >= 5, "the Quick start lost a block"
