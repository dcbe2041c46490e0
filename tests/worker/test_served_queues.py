"""Which queues a worker serves when it is given no list, on the memory store."""

from __future__ import annotations

from sqsjobs import JobQueue, JobRegistry, JobStatus, JobWorker

from .conftest import Env


def mail_registry(ran: list[str]) -> JobRegistry:
    registry = JobRegistry()
    registry.add("mail.send", lambda ctx: ran.append(ctx.job.queue), queue="mail")
    registry.add("audit.note", lambda ctx: ran.append(ctx.job.queue))
    return registry


async def test_the_default_queue_and_every_queue_a_handler_declares(env: Env) -> None:
    ran: list[str] = []
    registry = mail_registry(ran)
    producer = JobQueue(env.store, clock=env.clock, registry=registry)
    mail = (await producer.enqueue("mail.send", {"to": "zoë@example.com"})).job
    note = (await producer.enqueue("audit.note", {"who": "ana"})).job
    elsewhere = (await producer.enqueue("audit.note", None, queue="archive")).job
    worker = JobWorker(env.queue, registry)
    assert await worker.run_once() and await worker.run_once()
    assert not await worker.run_once()
    await worker.stop()
    assert sorted(ran) == ["default", "mail"]
    for job_id, status in [
        (mail.id, JobStatus.COMPLETED),
        (note.id, JobStatus.COMPLETED),
        (elsewhere.id, JobStatus.QUEUED),
    ]:
        stored = await env.queue.get(job_id)
        assert stored is not None and stored.status is status


async def test_a_given_list_is_served_as_given(env: Env) -> None:
    ran: list[str] = []
    producer = JobQueue(env.store, clock=env.clock, registry=mail_registry(ran))
    await producer.enqueue("mail.send", None)
    await producer.enqueue("audit.note", None, queue="archive")
    worker = JobWorker(env.queue, mail_registry(ran), queues=["archive"])
    assert await worker.run_once()
    assert not await worker.run_once()
    await worker.stop()
    assert ran == ["archive"]
