"""One SqsJobStore used from several event loops, one after another.

Scripts call ``asyncio.run`` more than once, and pytest-asyncio gives each test its own
loop while a store fixture may be shared. aiobotocore clients belong to the loop that
opened them, so the store opens fresh ones on each new loop, and those of a loop are
closed on it when it shuts down: no ``Event loop is closed`` and no unclosed session
(pytest turns a ResourceWarning into an error, and ``gc.collect`` makes it show here).
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sqsjobs import JobQueue, JobStatus
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.store.background import DELETE_WINDOW
from sqsjobs.aws.store.held_messages import HOLD
from sqsjobs.aws.transports.aio import AioTransport
from sqsjobs.aws.transports.endpoint import Endpoint
from sqsjobs.aws.wire.protocol import Call

from .conftest import depth
from .emulator import unique_prefix


async def put_and_get(store: SqsJobStore, tenant: str, city: str) -> str:
    queue = JobQueue(store)
    job = (await queue.enqueue("cache.warm", {"city": city}, tenant=tenant)).job
    found = await queue.get(job.id)
    assert found is not None and found.status is JobStatus.QUEUED
    return job.id


async def claim_and_complete(store: SqsJobStore, wanted: set[str]) -> set[str]:
    done: set[str] = set()
    deadline = time.monotonic() + 10
    while done != wanted:
        assert time.monotonic() < deadline, f"claimed {sorted(done)} of {sorted(wanted)}"
        for job in await store.claim("default", "loop-worker", time.time(), limit=10, wait=1):
            assert job.lease_token is not None
            assert await store.complete(job.id, job.lease_token, time.time(), {"warmed": True})
            done.add(job.id)
    return done


def test_a_store_serves_one_asyncio_run_after_another(aws_endpoint: str, sqs: Any) -> None:
    store = SqsJobStore.create(unique_prefix(), endpoint_url=aws_endpoint)
    try:
        first = asyncio.run(put_and_get(store, "acme-7", "Αθήνα"))
        second = asyncio.run(put_and_get(store, "acme-8", "Ñuñoa"))
        assert asyncio.run(claim_and_complete(store, {first, second})) == {first, second}

        async def read_then_close() -> list[Any]:
            queue = JobQueue(store)
            try:
                return [await queue.get(job_id) for job_id in (first, second)]
            finally:
                await store.aclose()

        jobs = asyncio.run(read_then_close())
        gc.collect()
    finally:
        store.close()
    assert [(j.status, j.result) for j in jobs if j] == [
        (JobStatus.COMPLETED, {"warmed": True})
    ] * 2
    assert depth(sqs, store.queue_urls["default"]) == 0  # both messages deleted


@pytest.fixture(scope="module")
def shared_store(aws_endpoint: str) -> Iterator[SqsJobStore]:
    """One store for the tests below, each of which runs on its own event loop."""
    store = SqsJobStore.create(unique_prefix(), endpoint_url=aws_endpoint)
    yield store
    asyncio.run(store.aclose())
    store.close()
    gc.collect()


@pytest.mark.parametrize(("tenant", "city"), [("t-1", "東京"), ("t-2", "Zürich"), ("t-3", "Lagos")])
async def test_a_shared_store_serves_each_tests_own_loop(
    shared_store: SqsJobStore, tenant: str, city: str
) -> None:
    job_id = await put_and_get(shared_store, tenant, city)
    assert await claim_and_complete(shared_store, {job_id}) == {job_id}
    done = await JobQueue(shared_store).get(job_id)
    assert done is not None and (done.status, done.tenant) == (JobStatus.COMPLETED, tenant)
    gc.collect()  # the previous test's loop is closed: nothing of it may be left unclosed


def test_deletes_left_waiting_by_an_ended_loop_go_out_with_the_next_loops(
    aws_endpoint: str, sqs: Any
) -> None:
    """A completion's message delete waits DELETE_WINDOW to share a batch; when its loop
    ends first, the next loop's window takes it along instead of leaving it for aclose."""
    store = SqsJobStore.create(unique_prefix(), endpoint_url=aws_endpoint)
    url = store.queue_urls["default"]
    try:
        first = asyncio.run(put_and_get(store, "acme-1", "Kyïv"))
        asyncio.run(claim_and_complete(store, {first}))  # ends before its delete window
        assert depth(sqs, url) == 1

        async def complete_another_and_wait() -> None:
            second = await put_and_get(store, "acme-2", "Łódź")
            await claim_and_complete(store, {second})
            await asyncio.sleep(DELETE_WINDOW + 0.3)
            assert depth(sqs, url) == 0

        asyncio.run(complete_another_and_wait())
    finally:
        asyncio.run(store.aclose())
        store.close()
    gc.collect()


def test_messages_held_by_an_ended_loop_come_back_for_the_next_loops_claim(
    aws_endpoint: str, sqs: Any
) -> None:
    """A claim of one receives ten and holds the rest; their timer, which hands them back
    after HOLD, dies with its loop. The next loop's claim must still get them at once,
    not after their visibility timeout (a worker stopped, then ``run_once`` in a test)."""
    store = SqsJobStore.create(unique_prefix(), endpoint_url=aws_endpoint)
    try:
        ids = {asyncio.run(put_and_get(store, f"acme-{n}", "Gdańsk")) for n in range(3)}

        async def claim(limit: int) -> set[str]:
            jobs = await store.claim("default", "w-1", time.time(), limit=limit, wait=1)
            return {job.id for job in jobs}

        first = asyncio.run(claim(1))  # two more received with it, and held
        time.sleep(HOLD + 0.2)  # past the hold, with no loop to run its timer
        rest = asyncio.run(claim(3))
        assert len(first) == 1 and first | rest == ids
    finally:
        asyncio.run(store.aclose())
        store.close()
    gc.collect()


class RecordingTransport(AioTransport):
    """Notes, for each client closed, its service and the loop it was closed on."""

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(endpoint)
        self.closed: list[tuple[str, asyncio.AbstractEventLoop]] = []

    def _open(self, service: Any) -> Any:
        opened = super()._open(service)
        closed = self.closed

        class Noted:
            async def __aenter__(self) -> Any:
                return await opened.__aenter__()

            async def __aexit__(self, *exc_info: Any) -> Any:
                closed.append((service, asyncio.get_running_loop()))
                return await opened.__aexit__(*exc_info)

        return Noted()


def test_each_loops_clients_are_closed_on_it_when_asyncio_run_ends(aws_endpoint: str) -> None:
    transport = RecordingTransport(Endpoint(aws_endpoint))
    loops: list[asyncio.AbstractEventLoop] = []

    async def list_queues_and_tables() -> None:
        loops.append(asyncio.get_running_loop())
        await transport(Call("sqs", "list_queues", {}))
        await transport(Call("dynamodb", "list_tables", {}))

    asyncio.run(list_queues_and_tables())
    assert sorted(transport.closed, key=str) == [("dynamodb", loops[0]), ("sqs", loops[0])]
    asyncio.run(list_queues_and_tables())
    assert transport.closed[2:] == [("dynamodb", loops[1]), ("sqs", loops[1])]
    gc.collect()


# The emulator keeps connections open, as AWS does, and a transport of a closed loop can
# no longer be closed (closing one schedules a callback on its loop): the sockets the first
# loop kept alive are closed by the garbage collector, which warns of each. The clients
# themselves, and their sessions, are still closed by the next loop.
@pytest.mark.filterwarnings("ignore:unclosed transport:ResourceWarning")
@pytest.mark.filterwarnings("ignore:unclosed <socket:ResourceWarning")
def test_a_loop_closed_without_shutting_down_leaves_its_clients_to_the_next(
    aws_endpoint: str,
) -> None:
    transport = RecordingTransport(Endpoint(aws_endpoint))
    manual = asyncio.new_event_loop()
    try:
        manual.run_until_complete(transport(Call("sqs", "list_queues", {})))
    finally:
        manual.close()  # no shutdown_asyncgens: the clients are still open
    assert transport.closed == []

    async def list_tables_then_close() -> asyncio.AbstractEventLoop:
        await transport(Call("dynamodb", "list_tables", {}))
        await transport.aclose()
        return asyncio.get_running_loop()

    loop = asyncio.run(list_tables_then_close())
    assert transport.closed == [("sqs", loop), ("dynamodb", loop)]
    gc.collect()
