"""How long the ``sqsjobs`` command takes to start, next to a bare interpreter.

Each sample runs one command in a fresh process and times it from spawn to exit, as an
operator waits for it: ``python -c pass`` (the floor), ``python -c "import sqsjobs"``
(the package root), ``sqsjobs --version``, ``sqsjobs --help``, ``sqsjobs jobs --help``
and ``sqsjobs jobs show ID``. The last reads one job from the local AWS emulator
(``sqsjobs.testing.local_aws``, in this process; the command finds its store from
``SQSJOBS_TABLE``, ``SQSJOBS_QUEUES`` and ``AWS_ENDPOINT_URL``, with dummy credentials),
so it also pays for boto3's clients and one DynamoDB read. The cases take turns, so a
busy machine slows them alike; one warm-up run per case writes the bytecode caches first
(``PYTHONDONTWRITEBYTECODE`` is dropped), as an installed package has them.

The commands run through the console script beside this interpreter (``sqsjobs``, the
entry point an install makes), or ``python -m sqsjobs`` without one. The table gives the
median and best seconds of each and the median's ratio to ``python -c pass``. Targets:
``--version`` and ``--help`` at most 0.25 s, ``jobs show`` at most 0.8 s.

    python bench/cli_startup.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from sqsjobs import SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing import local_aws

# What the emulator needs of the AWS environment, and nothing of this machine's.
DUMMY_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}
FLOOR = "python -c pass"


def sqsjobs_command() -> list[str]:
    """The console script installed beside this interpreter, else ``python -m sqsjobs``."""
    script = Path(sys.executable).with_name("sqsjobs")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "sqsjobs"]


def cases(job_id: str) -> dict[str, list[str]]:
    sqsjobs = sqsjobs_command()
    return {
        FLOOR: [sys.executable, "-c", "pass"],
        'python -c "import sqsjobs"': [sys.executable, "-c", "import sqsjobs"],
        "sqsjobs --version": [*sqsjobs, "--version"],
        "sqsjobs --help": [*sqsjobs, "--help"],
        "sqsjobs jobs --help": [*sqsjobs, "jobs", "--help"],
        "sqsjobs jobs show ID": [*sqsjobs, "jobs", "show", job_id],
    }


def sample(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    taken = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    return taken


def measure(runs: int, endpoint: str) -> dict[str, list[float]]:
    store = SqsJobStore.create(f"bench-cli-{uuid.uuid4().hex[:8]}", endpoint_url=endpoint)
    try:
        job_id = SyncJobQueue(store).enqueue("bench.noop", {"n": 1}).job.id
        env = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            **DUMMY_AWS,
            "SQSJOBS_TABLE": store.table_name,
            "SQSJOBS_QUEUES": ",".join(f"{q}={url}" for q, url in store.queue_urls.items()),
            "AWS_ENDPOINT_URL": endpoint,
            "NO_COLOR": "1",
            "COLUMNS": "100",
        }
        for name in ("SQSJOBS_STACK", "AWS_PROFILE", "AWS_REGION"):
            env.pop(name, None)
        commands = cases(job_id)
        for argv in commands.values():
            sample(argv, env)  # writes the bytecode caches
        times: dict[str, list[float]] = {label: [] for label in commands}
        for _ in range(runs):
            for label, argv in commands.items():
                times[label].append(sample(argv, env))
        return times
    finally:
        store.close()


def table(times: dict[str, list[float]]) -> str:
    floor = statistics.median(times[FLOOR])
    lines = [
        "| command | median (s) | best (s) | ratio to `python -c pass` |",
        "|---|---:|---:|---:|",
    ]
    for label, taken in times.items():
        median = statistics.median(taken)
        lines.append(f"| `{label}` | {median:.3f} | {min(taken):.3f} | {median / floor:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    os.environ.update(DUMMY_AWS)  # for the store this process creates in the emulator
    with local_aws() as endpoint:
        times = measure(runs, endpoint)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{runs} runs each, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {load:.2f} at the end\n"
    )
    print(table(times))


if __name__ == "__main__":
    main()
