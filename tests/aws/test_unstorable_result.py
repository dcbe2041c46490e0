"""A result the table cannot store dead-letters its job on SQS too: the handler ran once.

The refusal comes after the handler's side effects; a retry would repeat them and be
refused again. The job is dead at once with a copy in the dead-letter queue, and
nothing is left in flight for another worker to run.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqsjobs import JobContext, JobQueue, JobStatus, JobWorker
from sqsjobs.aws import SqsJobStore

from .conftest import depth


async def test_a_result_that_is_not_json_is_dead_after_one_run(
    store: SqsJobStore, sqs: Any
) -> None:
    queue = JobQueue(store)
    job = (await queue.enqueue("invoice.send", {"to": "zoë@example.org"}, max_attempts=3)).job
    sent: list[int] = []

    async def send(ctx: JobContext) -> dict[str, Any]:
        sent.append(ctx.attempt)
        return {"sent_at": datetime.now(UTC), "to": ctx.payload["to"]}

    worker = JobWorker(queue, {"invoice.send": send})
    assert await worker.run_once()
    dead = await queue.get(job.id)
    assert dead is not None and (dead.status, dead.attempts) == (JobStatus.DEAD, 1)
    assert dead.last_error is not None
    assert dead.last_error.startswith("JobConfigError: Job result at $.sent_at: a datetime")
    assert not await worker.run_once()
    assert sent == [1]
    assert depth(sqs, store.queue_urls["default"]) == 0  # nothing in flight to run again
    assert depth(sqs, store.dead_letter_queue_urls["default"]) == 1
