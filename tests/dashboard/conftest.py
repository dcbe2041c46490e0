"""Fixtures of the dashboard's tests: a memory store holding the realistic mix of ``seed``."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from starlette.types import ASGIApp

from sqsjobs import MemoryJobStore
from sqsjobs.contrib.dashboard import make_dashboard

from .seed import Seeded, seed

TOKEN = re.compile(r'name="csrf_token" value="([0-9a-f]{64})"')
LOCAL = "http://127.0.0.1:8321"  # the Host a browser on the command's own address sends


def local(app: ASGIApp) -> TestClient:
    """A test client that asks as a browser on 127.0.0.1 does (the dashboard checks Host)."""
    return TestClient(app, base_url=LOCAL)


@pytest.fixture
async def memory() -> tuple[MemoryJobStore, Seeded]:
    store = MemoryJobStore()
    return store, await seed(store)


@pytest.fixture
def store(memory: tuple[MemoryJobStore, Seeded]) -> MemoryJobStore:
    return memory[0]


@pytest.fixture
def seeded(memory: tuple[MemoryJobStore, Seeded]) -> Seeded:
    return memory[1]


@pytest.fixture
def client(store: MemoryJobStore) -> Iterator[TestClient]:
    """A read-only dashboard, as ``make_dashboard`` gives one by default."""
    with local(make_dashboard(store)) as made:
        yield made


@pytest.fixture
def acting(store: MemoryJobStore) -> Iterator[TestClient]:
    """A dashboard with actions on."""
    with local(make_dashboard(store, actions=True)) as made:
        yield made


def csrf_token(html: str) -> str:
    """The CSRF token a page's action forms carry."""
    found = TOKEN.search(html)
    assert found is not None, "the page has no action form"
    return found.group(1)
