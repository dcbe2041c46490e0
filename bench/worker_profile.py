"""Where a worker's CPU goes, per job: the SDK's pipeline, the transport, sqsjobs by module.

A worker in a subprocess drains ``--jobs`` no-op jobs from the local AWS emulator (which
runs in this process, so its CPU is not the worker's) under ``cProfile``, timed by the
worker thread's own CPU clock (``time.thread_time``) and turned on at the first
completion, so start-up (imports, clients) is left out. Each function's own time
(``tottime``) is put in the bucket of the file it lives in, and the buckets are printed
as milliseconds of CPU per job and as shares:

    python bench/worker_profile.py [--jobs 1000] [--concurrency 8] [--lean] [--top 25]

cProfile's own overhead inflates every bucket by about the same factor, so read the
shares, and ``bench/aws_throughput.py`` for the unprofiled CPU per job.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict

from sqsjobs import EnqueueRequest, Job, JobContext, JobQueue, JobWorker
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing import RequestCounter, local_aws

CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
}
# Buckets by where a function's file is, first match wins: the SDK's per-call pipeline,
# the HTTP transport and event loop, the libraries sqsjobs builds on, then sqsjobs.
BUCKETS = (
    ("aiohttp, ssl, sockets", ("/aiohttp/", "/yarl/", "/multidict/", "ssl.py", "socket.py")),
    ("asyncio event loop", ("/asyncio/", "selectors.py")),
    ("pydantic", ("/pydantic/", "/pydantic_core/")),
    ("logging", ("/logging/",)),
)


STDLIB = "the standard library, not charged to a caller"


async def _noop(ctx: JobContext) -> None:
    return None


async def drain(endpoint: str, prefix: str, jobs: int, concurrency: int, out: str) -> None:
    """The worker subprocess: drain ``jobs`` jobs, profiling from the first completion."""
    profiler = cProfile.Profile(time.thread_time)
    done = asyncio.Event()
    completed = 0

    def on_complete(job: Job) -> None:
        nonlocal completed
        completed += 1
        if completed == 1:
            profiler.enable()
        if completed == jobs:
            profiler.disable()
            done.set()

    store = SqsJobStore.create(prefix, endpoint_url=endpoint)
    worker = JobWorker(
        JobQueue(store), {"bench.noop": _noop}, concurrency=concurrency, on_complete=on_complete
    )
    worker.start()
    await done.wait()
    await worker.stop()
    await store.aclose()
    profiler.dump_stats(out)


def bucket(filename: str) -> str:
    path = filename.replace(os.sep, "/")
    if "/sqsjobs/" in path:
        module = path.rsplit("/sqsjobs/", 1)[1].removesuffix(".py")
        return "sqsjobs." + module.replace("/", ".")
    for sdk in ("/aiobotocore/", "/botocore/", "/boto3/"):
        if sdk in path:  # the SDK by module: parsers, serialize, auth, hooks, endpoint...
            module = path.rsplit(sdk, 1)[1].removesuffix(".py").replace("/", ".")
            return f"{sdk.strip('/')}.{module}"
    for name, marks in BUCKETS:
        if any(mark in path for mark in marks):
            return name
    return STDLIB if path.startswith(("~", "<")) or "/lib/python" in path else path


def report(stats_file: str, jobs: int, top: int) -> None:
    """Buckets of own time. Time spent in the standard library and in builtins
    (``{method 'join' of 'str'}``) is charged to whoever called it, up the call graph to
    the first caller in a bucket, in the shares of the time each call site spent there:
    botocore's ``hmac`` and ``copy`` count as botocore's, sqsjobs's ``json.dumps`` as the
    sqsjobs module's that called it."""
    stats = pstats.Stats(stats_file)
    table = stats.stats  # type: ignore[attr-defined]
    by_bucket: dict[str, float] = defaultdict(float)
    own = 0.0

    def charge(func: tuple[str, int, str], seconds: float, depth: int) -> None:
        name = bucket(func[0])
        callers = table.get(func, (0, 0, 0, 0, {}))[4]
        spent = sum(call[2] for call in callers.values())
        if name != STDLIB or depth > 40 or spent <= 0:
            by_bucket[name] += seconds
            return
        for caller, call in callers.items():
            charge(caller, seconds * call[2] / spent, depth + 1)

    for func, (_, _, tottime, _, _) in table.items():
        own += tottime
        charge(func, tottime, 0)
    print(f"\nworker CPU under the profiler: {1000 * own / jobs:.2f} ms per job over {jobs - 1}")
    for group in ("sqsjobs.", "botocore.", "aiobotocore.", "boto3."):
        seconds = sum(t for name, t in by_bucket.items() if name.startswith(group))
        label = f"{group.rstrip('.')}, every module"
        print(f"  {label:<48} {1000 * seconds / jobs:6.3f} ms/job {seconds / own:6.1%}")
    rows = sorted(by_bucket.items(), key=lambda item: -item[1])
    for name, seconds in rows[:top]:
        print(f"  {name:<48} {1000 * seconds / jobs:6.3f} ms/job {seconds / own:6.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--lean", action="store_true", help="the worker on the lean path")
    parser.add_argument("--top", type=int, default=25, help="buckets to print")
    parser.add_argument("--keep", help="copy the raw profile here (pstats format)")
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    options = parser.parse_args()
    for name, value in CREDENTIALS.items():
        os.environ.setdefault(name, value)
    if options.worker:
        endpoint, prefix, jobs, concurrency, out = options.worker
        asyncio.run(drain(endpoint, prefix, int(jobs), int(concurrency), out))
        return
    counter = RequestCounter()
    with local_aws(counter=counter) as endpoint, tempfile.TemporaryDirectory() as where:
        prefix = f"profile-{uuid.uuid4().hex[:8]}"
        store = SqsJobStore.create(prefix, endpoint_url=endpoint)
        requests = [EnqueueRequest("bench.noop", {"n": n}) for n in range(options.jobs)]
        for start in range(0, len(requests), 100):
            asyncio.run(JobQueue(store).enqueue_many(requests[start : start + 100]))
        store.close()
        out = os.path.join(where, "worker.prof")
        environment = os.environ | {"SQSJOBS_LEAN": "1" if options.lean else "0"}
        worker = [str(options.jobs), str(options.concurrency), out]
        command = [sys.executable, __file__, "--worker", endpoint, prefix, *worker]
        before = counter.counts()
        subprocess.run(command, check=True, env=environment)
        spent = counter.counts() - before
        calls = ", ".join(
            f"{action} {n / options.jobs:.2f}" for (_, action), n in sorted(spent.requests.items())
        )
        print(f"the worker's requests per job (its start and stop included): {calls}")
        report(out, options.jobs, options.top)
        if options.keep:
            import shutil

            shutil.copy(out, options.keep)


if __name__ == "__main__":
    main()
