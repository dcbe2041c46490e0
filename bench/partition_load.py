"""Write units per partition key, of the table and of each index, and the ceiling they set.

N jobs go through the emulator (``enqueue_many`` in batches of 100, then one worker at
concurrency 10, no-op handler) while its billing meter (``sqsjobs.testing.meter``) prices
every DynamoDB write from the item's before and after images. Each write lands on one
partition key (the table's ``pk``, or an index's partition key), so summing WRU per key
over the run gives each key's share of the job rate: WRU per job that passes.

A partition key takes at most about 1,000 WRU/s. Multiplying a key's WRU per job by a
job rate (10,000 and 50,000 jobs/s) shows which key saturates first, and dividing 1,000
by the hottest key's WRU per job gives the table's ceiling in jobs/s on this layout.
(Adaptive capacity can split a hot key's item collection by sort key, but the list
index's sort key starts with the queue and grows with ``created_at``, so new entries
always land at the end of the range and a split does not spread them.)

    python bench/partition_load.py [--jobs 400] [--payload-kb 0,1,10] [--shards 4,16]

``--shards`` runs once per list-index shard count (``SqsJobStore(index_shards=N)``).

``--payload-kb 0`` is a small payload (``{"n": i}``); any other figure is a payload of
that many KB of compact JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from collections import Counter

from request_costs import (  # this folder: the scripts run as `python bench/...`
    drain,
    emulator_credentials,
)
from sqsjobs import EnqueueRequest, JobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing import local_aws
from sqsjobs.testing.meter import BillingMeter, Write

LIMIT = 1000  # WRU/s one partition key takes
RATES = (10_000, 50_000)  # jobs/s to extrapolate to
BATCH = 100
SHOWN = 10


def payload(n: int, kilobytes: int) -> dict[str, object]:
    if kilobytes == 0:
        return {"n": n}
    return {"data": "x" * (kilobytes * 1024 - len('{"data":""}'))}


async def run_jobs(
    endpoint: str, meter: BillingMeter, jobs: int, kilobytes: int, shards: int
) -> Counter[str]:
    """WRU by ``table:pk`` / ``index:key`` for ``jobs`` jobs through put, claim, complete."""
    prefix = f"load-{uuid.uuid4().hex[:8]}"
    store = SqsJobStore.create(prefix, endpoint_url=endpoint, index_shards=shards)
    queue = JobQueue(store, payload_max_bytes=200 * 1024)
    with meter.record() as records:
        for start in range(0, jobs, BATCH):
            await queue.enqueue_many(
                [
                    EnqueueRequest("bench", payload(n, kilobytes))
                    for n in range(start, start + BATCH)
                ]
            )
        await drain(queue, lambda ctx: None, jobs, 10)
        await store.aclose()
    load: Counter[str] = Counter()
    for record in records:
        if isinstance(record, Write) and record.table == store.table_name:
            for charge in record.charges:
                load[f"{charge.index_name or 'table'}:{charge.partition}"] += charge.units
    return load


def report(load: Counter[str], jobs: int, kilobytes: int, shards: int) -> None:
    table_keys = [key for key in load if key.startswith("table:")]
    total = sum(load.values())
    size = "small payload" if kilobytes == 0 else f"{kilobytes} KB payload"
    print(f"\n{jobs} jobs, {size}, {shards} shards: {total / jobs:.2f} WRU per job")
    print(f"table: {len(table_keys)} keys, hottest {max(load[k] for k in table_keys)} WRU")
    header = ["partition key", "WRU", "WRU per job", *(f"WRU/s at {r:,} jobs/s" for r in RATES)]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for key, units in load.most_common(SHOWN):
        per_job = units / jobs
        rates = " | ".join(
            f"{per_job * rate:,.0f} ({per_job * rate / LIMIT:.1f} x limit)" for rate in RATES
        )
        print(f"| `{key}` | {units} | {per_job:.3f} | {rates} |")
    hottest, units = load.most_common(1)[0]
    print(
        f"ceiling: `{hottest}` reaches {LIMIT:,} WRU/s at {LIMIT / (units / jobs):,.0f} jobs/s "
        f"({units / jobs:.3f} WRU per job)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=400, help="a multiple of 100")
    parser.add_argument("--payload-kb", default="0", help="comma-separated KB; 0 is small")
    parser.add_argument("--shards", default="4", help="comma-separated list-index shard counts")
    options = parser.parse_args()
    emulator_credentials()
    meter = BillingMeter()
    with local_aws(meter=meter) as endpoint:
        for shards in (int(part) for part in options.shards.split(",")):
            for kilobytes in (int(part) for part in options.payload_kb.split(",")):
                load = asyncio.run(run_jobs(endpoint, meter, options.jobs, kilobytes, shards))
                report(load, options.jobs, kilobytes, shards)


if __name__ == "__main__":
    main()
