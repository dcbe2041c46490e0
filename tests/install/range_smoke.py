"""Run in an environment of the lowest supported aiobotocore: jobs through each async path.

Given the emulator's endpoint and a store's resources as JSON, it enqueues, claims and
completes jobs three ways: the SDK's pipeline on a new aiobotocore session with a
``before-send`` handler, the lean opt-in, and an ``aioboto3.Session`` as ``aio_session``.
It prints what each saw as one JSON object.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import warnings
from collections import Counter
from typing import Any

import aioboto3
import aiobotocore
from aiobotocore.session import get_session

from sqsjobs import JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore


class Seen:
    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def __call__(self, event_name: str, **kwargs: Any) -> None:
        self.calls[event_name.rpartition(".")[2]] += 1


async def run_jobs(store: SqsJobStore, count: int) -> list[str]:
    queue = JobQueue(store)
    ids = [(await queue.enqueue("range.check", {"n": n, "ß": "ü"})).job.id for n in range(count)]
    done = 0
    while done < count:
        for job in await store.claim("default", "range-worker", time.time(), wait=1.0):
            assert await store.complete(job.id, job.lease_token or "", time.time(), {"n": done})
            done += 1
    statuses = []
    for job_id in ids:
        found = await queue.get(job_id)
        statuses.append(found.status.value if found else "missing")
    return statuses


async def main(resources: dict[str, Any]) -> dict[str, Any]:
    def store(**options: Any) -> SqsJobStore:
        return SqsJobStore(
            table_name=resources["table"],
            queue_urls=resources["queues"],
            endpoint_url=resources["endpoint"],
            **options,
        )

    out: dict[str, Any] = {"aiobotocore": aiobotocore.__version__}
    seen = Seen()
    session = get_session()
    session.register("before-send", seen)
    default = store(aio_session=session)
    out["default"] = await run_jobs(default, 3)
    out["default_updates_seen"] = seen.calls["UpdateItem"]
    await default.aclose()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lean = store(lean=True)
        out["lean"] = await run_jobs(lean, 3)
        aio = lean._transport._aio
        assert aio is not None
        _, sender = await aio._opened("dynamodb")
        out["lean_routes"] = sorted(getattr(sender, "_routes", {}))
        await lean.aclose()
    out["lean_warnings"] = [
        str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)
    ]
    boto3_seen = Seen()
    legacy = aioboto3.Session()
    legacy.events.register("before-send", boto3_seen)
    through_aioboto3 = store(aio_session=legacy)
    out["aioboto3"] = await run_jobs(through_aioboto3, 2)
    out["aioboto3_updates_seen"] = boto3_seen.calls["UpdateItem"]
    await through_aioboto3.aclose()
    assert all(status == JobStatus.COMPLETED.value for status in out["default"])
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.loads(sys.argv[1])))))
