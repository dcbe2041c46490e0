"""Priority: among due jobs of one queue, a higher priority is claimed first (both stores).

On ``SqsJobStore`` this is the lane rule (a job of priority 1 or more is read from its
lane before the queue's backlog); on ``MemoryJobStore`` the claim order itself.
"""

from __future__ import annotations

from .harness import Harness
from .support import claim, claim_one, put


async def test_a_higher_priority_job_enqueued_later_is_claimed_first(harness: Harness) -> None:
    backlog = [await put(harness, payload={"n": n}) for n in range(3)]
    urgent = await put(harness, payload={"n": "urgent"}, priority=10)
    first = await claim_one(harness)
    assert first.id == urgent.id
    # On SqsJobStore the urgent job's message is also in the queue itself (a lane holds a
    # copy): a claim that receives only that copy claims nothing, and the next goes on.
    rest: set[str] = set()
    for _ in range(3 * len(backlog)):
        if len(rest) == len(backlog):
            break
        rest |= {job.id for job in await claim(harness)}
    assert rest == {job.id for job in backlog}
