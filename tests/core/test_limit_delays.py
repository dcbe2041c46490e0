"""How long a deferred start waits (``sqsjobs.worker.permits.defer_delay``), and the limit keys."""

from __future__ import annotations

import pytest

from sqsjobs.core.models import Job
from sqsjobs.handlers.limits import HandlerLimits, Limit
from sqsjobs.worker.permits import DEFER_MAX, DEFER_MIN, defer_delay

NOW = 1_796_094_741.25


@pytest.mark.parametrize("jitter", [0.0, 0.5, 0.999])
def test_a_rate_deferral_waits_until_the_first_slot_frees_never_less(jitter: float) -> None:
    delay = defer_delay("rate", NOW + 0.4, NOW, jitter)
    assert 0.4 <= delay <= 0.4 * 1.25


def test_a_concurrency_deferral_looks_again_within_about_a_second() -> None:
    delays = [defer_delay("concurrency", NOW + 25.0, NOW, j) for j in (0.0, 0.5, 0.999)]
    assert delays == sorted(delays) and delays[0] >= 0.5 and delays[-1] < 1.5


def test_deferrals_are_bounded() -> None:
    assert defer_delay("rate", NOW + 3600, NOW, 0.9) == DEFER_MAX
    assert defer_delay("rate", NOW - 5, NOW, 0.0) == DEFER_MIN
    assert defer_delay(None, None, NOW, 0.0) == 0.5


def test_limit_keys_name_the_job_and_with_per_tenant_its_tenant(job: Job) -> None:
    fleet = HandlerLimits.build(concurrency=3, rate=(5, 1.0))
    assert fleet is not None
    assert fleet.for_job(job) == [
        Limit("concurrency", "concurrency/report.build", 3, None),
        Limit("rate", "rate/report.build", 5, 1.0),
    ]
    tenants = HandlerLimits.build(concurrency=1, per_tenant=True)
    assert tenants is not None
    assert tenants.for_job(job)[0].key == "concurrency/report.build/acme"
    assert tenants.for_job(job.model_copy(update={"tenant": None}))[0].key == (
        "concurrency/report.build/-"
    )
    assert HandlerLimits.build() is None


@pytest.fixture
def job() -> Job:
    from sqsjobs import EnqueueRequest
    from sqsjobs.producer.enqueue import prepare
    from tests.support.config import make_config

    config = make_config(clock=lambda: NOW)
    return prepare(config, EnqueueRequest("report.build", tenant="acme"), NOW).job
