"""The message of a job that has just become claimable: put, or released by its parents.

A job's message goes to its queue, and a copy to its priority lane when its priority is
in one's band (``wire.layout.lane_url``); both carry only its id and queue.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...core.models import Job, message_group
from ..wire import sqs
from ..wire.layout import Layout
from ..wire.protocol import Flow


def urls_of(layout: Layout, job: Job) -> list[str]:
    """Where a new job's message goes: its queue, and its priority lane if it has one."""
    lane = layout.lane_url(job.queue, job.priority)
    return [layout.url(job.queue)] if lane is None else [layout.url(job.queue), lane]


def body_of(job: Job) -> str:
    return sqs.body(job.id, job.queue)


def delay_of(job: Job, now: float) -> int:
    return sqs.send_delay(job.run_at.timestamp(), now)


def send_new(layout: Layout, job: Job, now: float) -> Flow[None]:
    """Send ``job``'s message (and its lane's copy)."""
    group = message_group(job)
    for url in urls_of(layout, job):
        yield sqs.send(url, body_of(job), delay_of(job, now), group)


def deliver_all(layout: Layout, jobs: Sequence[Job], now: float) -> Flow[None]:
    """Send the messages of newly written jobs, one batch per queue and ten at a time; an
    entry SQS refused is sent again on its own."""
    by_url: dict[str, list[Job]] = {}
    for job in jobs:
        for url in urls_of(layout, job):
            by_url.setdefault(url, []).append(job)
    for url, queued in by_url.items():
        for batch in sqs.chunks(queued):
            entries = [(body_of(job), delay_of(job, now), message_group(job)) for job in batch]
            reply = yield sqs.send_batch(url, entries)
            for failed in reply.get("Failed", []):
                yield sqs.send(url, *entries[int(failed["Id"])])
