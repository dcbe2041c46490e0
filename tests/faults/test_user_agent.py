"""The User-Agent of the store's requests: built once (``Config(user_agent=...)``, the
SDK's public option), naming the SDK, Python and sqsjobs, with the caller's
``user_agent_extra`` after it; a caller that names an app id keeps botocore's own
structured header, the only one that carries it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from aiobotocore.session import get_session
from botocore.config import Config

import sqsjobs
from sqsjobs import JobQueue
from sqsjobs.aws import SqsJobStore


class Agents:
    """The User-Agent headers a ``before-send`` handler saw, by action."""

    def __init__(self) -> None:
        self.seen: dict[str, set[str]] = {}

    def __call__(self, request: Any, event_name: str, **kwargs: Any) -> None:
        value = request.headers["User-Agent"]
        agent = value.decode() if isinstance(value, bytes) else value
        self.seen.setdefault(event_name.rpartition(".")[2], set()).add(agent)


async def agents_of(made: Callable[..., SqsJobStore], **options: Any) -> Agents:
    agents = Agents()
    session = get_session()
    session.register("before-send", agents)
    store = made(aio_session=session, **options)
    await JobQueue(store).enqueue("report.build", {"month": "2026-11", "by": "Zoë"})
    await store.claim("default", "worker-1", time.time(), limit=1, wait=0.0)
    return agents


async def test_every_request_names_the_sdk_python_and_sqsjobs(
    made: Callable[..., SqsJobStore],
) -> None:
    agents = await agents_of(made, config=Config(user_agent_extra="billing-api/4.2"))
    assert {"PutItem", "SendMessage", "ReceiveMessage"} <= set(agents.seen)
    for action, seen in agents.seen.items():
        (agent,) = seen  # the same string for every request
        assert agent.startswith("Botocore/"), (action, agent)
        assert f" sqsjobs/{sqsjobs.__version__} " in agent, (action, agent)
        assert agent.endswith(" billing-api/4.2"), (action, agent)


async def test_an_app_id_keeps_botocores_own_header(
    made: Callable[..., SqsJobStore],
) -> None:
    agents = await agents_of(made, config=Config(user_agent_appid="ledger"))
    for action, seen in agents.seen.items():
        assert all("app/ledger" in agent and "sqsjobs/" not in agent for agent in seen), action


async def test_a_callers_own_user_agent_replaces_the_stores(
    made: Callable[..., SqsJobStore],
) -> None:
    agents = await agents_of(made, config=Config(user_agent="ledger-worker/7.1"))
    for action, seen in agents.seen.items():
        assert all(agent.startswith("ledger-worker/7.1") for agent in seen), (action, seen)
        assert not any("sqsjobs/" in agent for agent in seen), (action, seen)
