"""How far a reader walks to follow one claim through the SQS store, measured by tracing.

A claim is the path every job takes to a worker, and the one that changes most as
features arrive (lanes, held messages, limits, groups). This traces real claims on the
embedded emulator and counts the store layer a reader has to follow: the functions of
``sqsjobs.aws.store`` (and their modules) a claim enters, and how many calls pass between
them, and the calls from a store-layer function into another module (each a file the
reader opens to follow the claim on). The flows below (``sqsjobs.aws.flows``: the claim
write, the SQS calls) are counted apart; they are the same for every source a claim reads.

Scenarios, each on a fresh store whose queue has the default priority lane:

- idle: one job; the claim long-polls the queue;
- held: a receive of ten for a claim of one, then a claim from what it held;
- busy with lanes: a backlog with urgent jobs; claims read the lane first, then the queue.

    python bench/claim_walk.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

from sqsjobs import EnqueueRequest, JobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.testing import local_aws

PACKAGE = Path(sys.modules["sqsjobs"].__file__ or "").parent
STORE_LAYER = PACKAGE / "aws" / "store"
FLOWS = PACKAGE / "aws" / "flows"


class Walk:
    """The sqsjobs functions entered while ``active``, and the calls among them."""

    def __init__(self) -> None:
        self.active = False
        self.entered: set[CodeType] = set()
        self.frames: dict[int, FrameType] = {}  # kept alive, so ids are not reused
        self.calls = 0
        self.crossings: set[tuple[CodeType, CodeType]] = set()  # caller -> callee, across modules

    def profile(self, frame: FrameType, event: str, _: Any) -> None:
        if not self.active or event != "call":
            return
        code = frame.f_code
        if not code.co_filename.startswith(str(PACKAGE)):
            return
        if id(frame) in self.frames:
            return  # a coroutine or generator resumed, not called again
        self.frames[id(frame)] = frame
        if _comprehension(code):
            return
        self.entered.add(code)
        if code.co_filename.startswith(str(STORE_LAYER)):
            self.calls += 1
        caller = _calling_function(frame)
        if (
            caller is not None
            and caller.co_filename != code.co_filename
            and caller.co_filename.startswith(str(STORE_LAYER))
        ):
            self.crossings.add((caller, code))

    def crossed(self) -> int:
        """Distinct calls from a store-layer function into another module of the package."""
        return len(self.crossings)

    def functions(self, under: Path) -> list[str]:
        return sorted(
            f"{Path(c.co_filename).relative_to(PACKAGE)}:{c.co_qualname}"
            for c in self.entered
            if c.co_filename.startswith(str(under))
        )

    def modules(self, under: Path) -> set[str]:
        return {name.split(":")[0] for name in self.functions(under)}


def _comprehension(code: CodeType) -> bool:
    return code.co_name.startswith("<")


def _calling_function(frame: FrameType) -> CodeType | None:
    """The package function that called ``frame``'s, past comprehensions."""
    caller = frame.f_back
    while caller is not None and _comprehension(caller.f_code):
        caller = caller.f_back
    if caller is None or not caller.f_code.co_filename.startswith(str(PACKAGE)):
        return None
    return caller.f_code


async def traced(walk: Walk, claim: Awaitable[Any]) -> Any:
    sys.setprofile(walk.profile)
    walk.active = True
    try:
        return await claim
    finally:
        walk.active = False
        sys.setprofile(None)


async def idle(store: SqsJobStore, walk: Walk) -> None:
    await JobQueue(store).enqueue("bench", {"n": 1})
    jobs = await traced(walk, store.claim("default", "w1", time.time(), limit=1, wait=1.0))
    assert len(jobs) == 1, jobs


async def held(store: SqsJobStore, walk: Walk) -> None:
    await JobQueue(store).enqueue_many([EnqueueRequest("bench", {"n": n}) for n in range(10)])
    for _ in range(2):
        jobs = await traced(walk, store.claim("default", "w1", time.time(), limit=1, wait=1.0))
        assert len(jobs) == 1, jobs


async def busy(store: SqsJobStore, walk: Walk) -> None:
    queue = JobQueue(store)
    await queue.enqueue_many([EnqueueRequest("bench", {"n": n}) for n in range(30)])
    await queue.enqueue_many([EnqueueRequest("bench", {"u": n}, priority=5) for n in range(5)])
    for _ in range(4):
        jobs = await traced(walk, store.claim("default", "w1", time.time(), limit=3, wait=1.0))
        assert jobs, "a busy queue yields jobs"


Scenario = Callable[[SqsJobStore, Walk], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {"idle": idle, "held": held, "busy with lanes": busy}


def main() -> None:
    for name, value in [
        ("AWS_ACCESS_KEY_ID", "bench"),
        ("AWS_SECRET_ACCESS_KEY", "bench"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ]:
        os.environ.setdefault(name, value)
    rows: list[tuple[str, Walk]] = []
    union = Walk()
    with local_aws() as endpoint:
        for name, scenario in SCENARIOS.items():
            store = SqsJobStore.create(
                f"walk-{uuid.uuid4().hex[:8]}", endpoint_url=endpoint, wait_time=1.0
            )
            walk = Walk()
            try:
                asyncio.run(scenario(store, walk))
            finally:
                store.close()
            rows.append((name, walk))
            union.entered |= walk.entered
            union.calls += walk.calls
            union.crossings |= walk.crossings
    header = ("scenario", "store fns", "modules", "calls", "crossings", "flow fns")
    print(f"{header[0]:<18}" + "".join(f"{h:>11}" for h in header[1:]))
    for name, walk in [*rows, ("all", union)]:
        figures = (
            len(walk.functions(STORE_LAYER)),
            len(walk.modules(STORE_LAYER)),
            walk.calls,
            walk.crossed(),
            len(walk.functions(FLOWS)),
        )
        print(f"{name:<18}" + "".join(f"{figure:>11}" for figure in figures))
    print("\nstore-layer functions a claim enters:")
    for function in union.functions(STORE_LAYER):
        print(f"  {function}")


if __name__ == "__main__":
    main()
