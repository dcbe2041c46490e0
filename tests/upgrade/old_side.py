"""The previous release's side of a mixed fleet: run with its ``src`` on ``PYTHONPATH``.

    python old_side.py COMMAND JSON_CONFIG

Commands: ``create`` (the table and queues as that release makes them), ``produce``,
``work`` (a worker until SIGTERM, which it drains on), ``reconcile`` and ``list``. Each prints
one JSON line as its answer. It uses only the public API that release had, so it runs
on either release (the tests check that it runs on this one too, by running it here).

``digest`` is what every handler returns: a short hash of the payload as the handler
received it, so a test can tell a job ran with its own payload, unchanged.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from typing import Any


def digest(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _store(config: dict[str, Any]) -> Any:
    from sqsjobs.aws import SqsJobStore

    return SqsJobStore(
        table_name=config["table"],
        queue_urls=config["queues"],
        dead_letter_queue_urls=config.get("dlqs") or None,
        clock_skew=0.1,
    )


def create(config: dict[str, Any]) -> dict[str, Any]:
    from sqsjobs.aws import SqsJobStore

    store = SqsJobStore.create(config["prefix"], max_receive_count=5, clock_skew=0.1)
    try:
        return {
            "table": store.table_name,
            "queues": dict(store.queue_urls),
            "dlqs": dict(store.dead_letter_queue_urls),
        }
    finally:
        store.close()


def produce(config: dict[str, Any]) -> list[dict[str, Any]]:
    from sqsjobs import SyncJobQueue

    store = _store(config)
    try:
        queue = SyncJobQueue(store)
        results = []
        for request in config["requests"]:
            result = queue.enqueue(request["name"], request["payload"], **request["options"])
            results.append({"id": result.job.id, "duplicate": result.duplicate})
        return results
    finally:
        store.close()


async def _work(config: dict[str, Any]) -> dict[str, Any]:
    from sqsjobs import JobContext, JobQueue, JobWorker

    ran: list[str] = []

    def pack(ctx: JobContext) -> str:
        ran.append(ctx.job.id)
        return digest(ctx.job.payload)

    def flaky(ctx: JobContext) -> str:
        ran.append(ctx.job.id)
        if ctx.attempt == 1:
            raise RuntimeError("carrier timed out, try again")
        return digest(ctx.job.payload)

    store = _store(config)
    worker = JobWorker(
        JobQueue(store),
        {"order.pack": pack, "order.flaky": flaky},
        queues=list(config["queues"]),
        concurrency=4,
        worker_id=config["worker_id"],
    )
    print(json.dumps({"started": True}), flush=True)
    try:
        await worker.run()  # until SIGTERM
    finally:
        await store.aclose()
    return {"ran": ran}


def work(config: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(_work(config))


def reconcile(config: dict[str, Any]) -> dict[str, Any]:
    store = _store(config)
    try:
        report = store.sync.reconcile(grace=config["grace"])
        return {"resent": report.resent, "dead": report.dead}
    finally:
        store.close()


def listed(config: dict[str, Any]) -> dict[str, Any]:
    """Every job this release's ``list`` finds, by id: its status and digest."""
    from sqsjobs import SyncJobQueue

    store = _store(config)
    try:
        queue = SyncJobQueue(store)
        found: dict[str, Any] = {}
        cursor = None
        while True:
            page = queue.list(limit=50, cursor=cursor)
            for job in page.jobs:
                found[job.id] = {"status": str(job.status), "digest": digest(job.payload)}
            cursor = page.next_cursor
            if cursor is None:
                return found
    finally:
        store.close()


def stats(config: dict[str, Any]) -> dict[str, Any]:
    """This release's counts of each queue, by status."""
    store = _store(config)
    try:
        return {
            found.queue: {str(status): count for status, count in found.counts.items()}
            for found in store.sync.stats()
        }
    finally:
        store.close()


COMMANDS = {
    "create": create,
    "produce": produce,
    "work": work,
    "reconcile": reconcile,
    "list": listed,
    "stats": stats,
}


if __name__ == "__main__":
    answer = COMMANDS[sys.argv[1]](json.loads(sys.argv[2]))
    print(json.dumps(answer, ensure_ascii=False))
