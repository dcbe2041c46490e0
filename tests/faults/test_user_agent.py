"""The User-Agent of the store's requests: built once (``Config(user_agent=...)``, the
SDK's public option), naming the SDK, Python and sqsjobs, with the caller's
``user_agent_extra`` after it; a caller that names an app id keeps botocore's own
structured header, the only one that carries it."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiobotocore.session import get_session
from botocore.config import Config

import sqsjobs
from sqsjobs import JobQueue
from sqsjobs.aws import SqsJobStore

from .conftest import FaultyAws


class Agents:
    """The User-Agent headers a ``before-send`` handler saw, by action."""

    def __init__(self) -> None:
        self.seen: dict[str, set[str]] = {}

    def __call__(self, request: Any, event_name: str, **kwargs: Any) -> None:
        value = request.headers["User-Agent"]
        agent = value.decode() if isinstance(value, bytes) else value
        self.seen.setdefault(event_name.rpartition(".")[2], set()).add(agent)


@pytest.fixture
async def store_with(faulty_aws: FaultyAws) -> AsyncIterator[Callable[..., SqsJobStore]]:
    base = SqsJobStore.create(f"ua-{uuid.uuid4().hex[:8]}", endpoint_url=faulty_aws.endpoint)
    opened: list[SqsJobStore] = []

    def store(**options: Any) -> SqsJobStore:
        one = SqsJobStore(settings=dataclasses.replace(base.settings, **options))
        opened.append(one)
        return one

    yield store
    for one in opened:
        await one.aclose()
    base.close()


async def agents_of(store_with: Callable[..., SqsJobStore], **options: Any) -> Agents:
    agents = Agents()
    session = get_session()
    session.register("before-send", agents)
    store = store_with(aio_session=session, **options)
    await JobQueue(store).enqueue("report.build", {"month": "2026-11", "by": "Zoë"})
    await store.claim("default", "worker-1", 1_765_000_000.25, limit=1, wait=0.0)
    return agents


async def test_every_request_names_the_sdk_python_and_sqsjobs(
    store_with: Callable[..., SqsJobStore],
) -> None:
    agents = await agents_of(store_with, config=Config(user_agent_extra="billing-api/4.2"))
    assert {"PutItem", "SendMessage", "ReceiveMessage"} <= set(agents.seen)
    for action, seen in agents.seen.items():
        (agent,) = seen  # the same string for every request
        assert agent.startswith("Botocore/"), (action, agent)
        assert f" sqsjobs/{sqsjobs.__version__} " in agent, (action, agent)
        assert agent.endswith(" billing-api/4.2"), (action, agent)


async def test_an_app_id_keeps_botocores_own_header(
    store_with: Callable[..., SqsJobStore],
) -> None:
    agents = await agents_of(store_with, config=Config(user_agent_appid="ledger"))
    for action, seen in agents.seen.items():
        assert all("app/ledger" in agent and "sqsjobs/" not in agent for agent in seen), action
