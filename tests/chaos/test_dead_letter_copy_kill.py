"""A worker SIGKILLed between a job's death and the confirmation of its dead-letter copy.

A job that dies in a worker is settled by four requests in turn: the dead write (which
sets ``copy_due``), the copy to the DLQ (``SendMessageBatch``, marked ``sqsjobs.copy``),
the delete of the original message, and the confirmation (``copy_due`` removed). A real
``sqsjobs worker`` process runs a job that fails for good and is SIGKILLed while one of
the first three requests is in flight, which leaves:

- ``dead-write``: the record dead and owing its copy, no copy, the original still queued;
- ``dlq-send``: the copy in the DLQ, the original still queued, the copy still owed;
- ``delete``: the copy in the DLQ, the original gone, the copy still owed.

The fault layer in front of the test's own emulator holds that one request
(``Fault.SLOW``, the first request of its kind), so the kill lands while it is in flight;
the emulator then serves it in full, as AWS serves a request whose sender died after
sending it. Each kill thus leaves exactly the state of a crash right after that request,
which the test checks before anything repairs it. Then another worker serves the queue
and ``sqsjobs reconcile`` runs, and what an operator expects of a dead job must hold:
its record dead, written once (by the killed worker: nothing recorded a second death),
exactly one copy in the DLQ (none would hide the death from the DLQ's alarm and ``dlq
list``; two would show it twice), nothing owed (``copy_due`` gone, the index entry
closed), the original message gone, and the handler run once (one line in its
side-effect log): the original coming back must not run the job again.

Exactly one copy after ``dlq-send`` and ``delete`` holds because the reconciler's look
at the DLQ finds the copy the killed worker sent and only confirms the record. That look
is a short poll of at most ``DLQ_LIMIT`` messages, so on a deep DLQ in AWS it may miss
the copy and send a second (a duplicate, never a loss); the emulator's DLQ here holds
one message, which a short poll always returns.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest

from sqsjobs import JobStatus, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.wire.items import job_key
from tests.aws.emulator import unique_prefix

# tests/faults' own emulator behind the fault layer: the holds must not slow the
# session's emulator, which other tests share.
from tests.faults.conftest import FaultyAws, faulty_aws  # noqa: F401  (a fixture)
from tests.faults.faulty_aws import OBSERVER_CONFIG, Fault, FaultPlan

from .test_chaos import ROOT, Fleet, SideEffects, worker_env

LEASE = 1.0  # the original comes back a second after the claim's visibility change
# How long the emulator holds the chosen request: the test kills the worker the moment it
# arrives, well within this, and only then is it served.
HOLD = 3.0
WAIT = 60.0  # a bound on each wait below, not how long they take (a few seconds)
FATAL = "chaos: poison payload, never retried"
DEPTH = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)


@dataclass(frozen=True)
class KillPoint:
    """The request held while the worker is killed, and what it leaves once served."""

    name: str
    service: str
    action: str
    copies: int  # messages in the DLQ then
    originals: int  # messages in the job's queue then

    def plan(self, queue: str, dlq: str) -> FaultPlan:
        """Hold the first such request (to ``queue`` or ``dlq``, by name), nothing else."""
        marks = {
            "UpdateItem": "#copy_due = :now",  # the dead write; the confirmation names :due
            "SendMessageBatch": dlq,  # only the copy goes to the DLQ
            "DeleteMessageBatch": queue,  # only the original is deleted before the kill
        }
        return FaultPlan(
            services=frozenset({self.service}),
            actions=frozenset({self.action}),
            body_contains=marks[self.action],
            first=(Fault.SLOW,),
            limit=1,
            delay=HOLD,
        )


POINTS = [
    KillPoint("dead-write", "dynamodb", "UpdateItem", copies=0, originals=1),
    KillPoint("dlq-send", "sqs", "SendMessageBatch", copies=1, originals=1),
    KillPoint("delete", "sqs", "DeleteMessageBatch", copies=1, originals=0),
]


class Observer:
    """The test's own reads of the table and queues, which the fault layer never touches."""

    def __init__(self, endpoint: str, store: SqsJobStore) -> None:
        self.sqs: Any = boto3.client("sqs", endpoint_url=endpoint, config=OBSERVER_CONFIG)
        self.dynamodb: Any = boto3.client("dynamodb", endpoint_url=endpoint, config=OBSERVER_CONFIG)
        self.table = store.table_name

    def depth(self, url: str) -> int:
        reply = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(DEPTH))
        return sum(int(reply["Attributes"][name]) for name in DEPTH)

    def record(self, job_id: str) -> dict[str, Any]:
        reply = self.dynamodb.get_item(
            TableName=self.table, Key=job_key(job_id), ConsistentRead=True
        )
        item: dict[str, Any] = reply["Item"]
        return item

    def close(self) -> None:
        self.sqs.close()
        self.dynamodb.close()


def wait_for(what: str, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not done():
        assert time.monotonic() < deadline, f"not within {WAIT:g}s: {what}"
        time.sleep(0.1)


def reconcile(env: dict[str, str]) -> int:
    """Run ``sqsjobs reconcile --grace 0`` as an operator would; the copies it sent."""
    done = subprocess.run(
        [sys.executable, "-m", "sqsjobs.cli", "reconcile", "--grace", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = re.search(r"(\d+) dead job\(s\) given the dead-letter copy", done.stdout)
    assert found is not None, done.stdout
    return int(found.group(1))


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("point", POINTS, ids=[point.name for point in POINTS])
def test_a_worker_killed_before_its_dead_letter_copy_is_confirmed_leaves_one_copy(
    point: KillPoint,
    faulty_aws: FaultyAws,  # noqa: F811  (the fixture imported above)
    tmp_path: Path,
) -> None:
    store = SqsJobStore.create(
        unique_prefix(), max_receive_count=5, endpoint_url=faulty_aws.endpoint
    )
    observer = Observer(faulty_aws.endpoint, store)
    queue_url = store.queue_urls["default"]
    dlq_url = store.dead_letter_queue_urls["default"]
    side_effects = SideEffects(tmp_path / "side-effects.log")
    env = worker_env(store, faulty_aws.endpoint, side_effects.path)
    fleet = Fleet(env, tmp_path)
    injector = faulty_aws.injector
    try:
        job = SyncJobQueue(store).enqueue("chaos.poison", {"order": 7}, lease=LEASE).job
        plan = point.plan(queue_url.rsplit("/", 1)[1], dlq_url.rsplit("/", 1)[1])
        with injector.faults(plan):
            fleet.workers = [fleet.start()]
            assert injector.faulted.wait(WAIT), f"the worker never sent its {point.action}"
            held = time.monotonic()
            victim = fleet.workers.pop()
            victim.process.send_signal(signal.SIGKILL)
            assert victim.process.wait(timeout=10) == -signal.SIGKILL
            victim.log.close()
            # Killed before the emulator answered: the worker never saw the reply.
            assert time.monotonic() - held < HOLD
        assert sum(injector.injected.values()) == 1

        # The held request is served now, and nothing else moves: the state a crash right
        # after it leaves.
        def served() -> bool:
            item = observer.record(job.id)
            copies, originals = observer.depth(dlq_url), observer.depth(queue_url)
            dead = item["status"]["S"] == JobStatus.DEAD.value
            return dead and (copies, originals) == (point.copies, point.originals)

        wait_for(f"the held {point.action} served", served)
        owing = observer.record(job.id)
        assert owing["phase"]["S"] == "open" and "copy_due" in owing, owing
        died = owing["updated_at"]["N"]
        side_effects.read()
        assert side_effects.runs == [(job.id, 1, victim.process.pid)]

        # Another worker meets the original (it must let it go, the record being dead),
        # and the reconciler settles what the copy still owes.
        fleet.workers = [fleet.start()]
        wait_for("the original deleted", lambda: observer.depth(queue_url) == 0)
        # A copy only where none was sent; where one was, the record is only confirmed.
        assert reconcile(env) == 1 - point.copies, "a copy sent, the DLQ having one"
        report = store.sync.reconcile(grace=0.0)
        assert (report.copied, report.resent, report.dead) == (0, 0, 0)  # nothing left
        assert fleet.drain() == [0]

        side_effects.read()
        assert side_effects.runs == [(job.id, 1, victim.process.pid)]  # one run, never again
        item = observer.record(job.id)
        assert item["status"]["S"] == JobStatus.DEAD.value
        assert item["updated_at"]["N"] == died, "a second death was recorded"
        assert item["attempts"]["N"] == "1" and FATAL in item["last_error"]["S"]
        assert "copy_due" not in item and item["phase"]["S"] == "dead", item
        assert observer.depth(queue_url) == 0
        assert observer.depth(dlq_url) == 1, "not exactly one copy in the DLQ"
        (letter,) = store.sync.dead_letters("default", limit=10)
        assert letter.job_id == job.id and letter.job is not None
        assert letter.job.status is JobStatus.DEAD
    finally:
        fleet.kill_all()
        observer.close()
        store.close()
