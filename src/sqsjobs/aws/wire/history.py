"""A kept history, for measuring what reads cost beside it: ended jobs written straight in.

For tests and benchmarks (``tests/aws/test_ended_partitions.py``, ``bench/request_costs.py``);
no store calls it.

An operator read must cost what is open, not what the table keeps (docs/explanation/scaling.md).
Measuring that needs a table holding thousands of ended jobs; running each through a
worker would take minutes on the emulator. ``keep_history`` writes them as the store's
own ending writes leave them: records from the store's codec (``wire.items``), ended as
``wire.transitions`` ends them, in the partition their record format puts them in, with
``BatchWriteItem``. A realistic spread: mostly completed, some cancelled and dead,
several tenants, created over the day before ``ended_before``.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime
from typing import Any

from ...core.models import Job, JobStatus
from .index_keys import DEFAULT_SHARDS, home, phase
from .items import MOVES_ENDED, RECORD_FORMAT, Attributes, item_from_job, number, text

SPREAD = ((JobStatus.COMPLETED, 85), (JobStatus.CANCELLED, 10), (JobStatus.DEAD, 5))
TENANTS = ("acme", "globex", "initech", None)
DAY = 86_400.0
BATCH = 25  # items per BatchWriteItem


def history_items(
    queue: str,
    count: int,
    *,
    ended_before: float,
    shards: int = DEFAULT_SHARDS,
    record_format: int = RECORD_FORMAT,
    seed: int = 0,
) -> list[Attributes]:
    """``count`` ended jobs of ``queue``, created within the day before ``ended_before``."""
    rng = random.Random(seed)
    statuses = [status for status, weight in SPREAD for _ in range(weight)]
    items: list[Attributes] = []
    for n in range(count):
        created = ended_before - rng.uniform(60.0, DAY) + rng.random()
        ended = min(created + rng.uniform(0.05, 30.0), ended_before)
        status = rng.choice(statuses)
        job = _job(queue, n, created, rng.choice(TENANTS), rng)
        item = item_from_job(job, None, shards, record_format=record_format)
        item |= {
            "status": text(status.value),
            "phase": text(phase(status)),
            "attempts": number(0 if status is JobStatus.CANCELLED else 1),
            "updated_at": number(ended),
            "expires_at": number(ended + (14 * DAY if status is JobStatus.DEAD else DAY)),
        }
        if status is JobStatus.COMPLETED:
            item |= {"completed_at": number(ended), "result": text('{"sent":true}')}
        if status is JobStatus.DEAD:
            item["last_error"] = text("SMTPDataError: 554 message rejected")
        if record_format >= MOVES_ENDED:
            item["list_pk"] = text(home(queue, job.id, shards, status))
        items.append(item)
    return items


def keep_history(client: Any, table: str, items: list[Attributes]) -> None:
    """Write ``items`` into ``table`` with a boto3 DynamoDB ``client``, 25 at a time."""
    for start in range(0, len(items), BATCH):
        requests = [{"PutRequest": {"Item": item}} for item in items[start : start + BATCH]]
        pending: dict[str, Any] = {table: requests}
        while pending:
            reply = client.batch_write_item(RequestItems=pending)
            pending = reply.get("UnprocessedItems") or {}


def _job(queue: str, n: int, created: float, tenant: str | None, rng: random.Random) -> Job:
    at = datetime.fromtimestamp(created, UTC)
    return Job.model_validate(
        {
            "id": uuid.UUID(int=rng.getrandbits(128)).hex,
            "queue": queue,
            "name": "invoice.send",
            "payload": {"invoice": f"INV-{n:06d}", "to": "zoë@example.com", "total": "31.90"},
            "status": JobStatus.QUEUED,
            "attempts": 0,
            "max_attempts": 3,
            "run_at": at,
            "created_at": at,
            "updated_at": at,
            "lease_until": None,
            "locked_by": None,
            "lease_token": None,
            "lease": 30.0,
            "timeout": 30.0,
            "priority": 0,
            "idempotency_key": None,
            "tenant": tenant,
            "last_error": None,
            "completed_at": None,
            "result": None,
        }
    )
