"""``list()``'s options, declared once (``producer.listing.ListOptions``).

Every producer face takes them as typed keywords, written in one signature per kind of
face (async, blocking); those signatures are the fields of ``ListOptions``, and the one
way the options become a store's ``list`` arguments is ``ListOptions.query``.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from sqsjobs import (
    JobConfigError,
    JobQueue,
    JobStatus,
    MemoryJobStore,
    SyncJobQueue,
    SyncTenantJobQueue,
    TenantJobQueue,
)
from sqsjobs.core.requests import JobFilter
from sqsjobs.producer.listing import AsyncListing, ListOptions, ListQuery, SyncListing

Listing = type[AsyncListing] | type[SyncListing]
FACES: dict[Listing, Listing] = {
    JobQueue: AsyncListing,
    TenantJobQueue: AsyncListing,
    SyncJobQueue: SyncListing,
    SyncTenantJobQueue: SyncListing,
}


@pytest.mark.parametrize("listing", [AsyncListing, SyncListing])
def test_the_list_keywords_are_the_fields_of_list_options(listing: Listing) -> None:
    parameters = list(inspect.signature(listing.list).parameters.values())[1:]  # self
    fields = dataclasses.fields(ListOptions)
    assert [p.name for p in parameters] == [f.name for f in fields]
    for parameter, field in zip(parameters, fields, strict=True):
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, field.name
        assert (parameter.default, parameter.annotation) == (field.default, field.type)


@pytest.mark.parametrize(("face", "listing"), FACES.items(), ids=lambda c: c.__name__)
def test_no_face_writes_the_keywords_again(face: Listing, listing: Listing) -> None:
    """Each face's ``list`` is its kind's: it supplies only what it does with the value."""
    assert face.list is listing.list
    assert issubclass(face, listing)


def test_query_builds_the_stores_arguments() -> None:
    options = ListOptions(queue="q", status="dead", name="n", tenant="t", limit=5, cursor="c")
    expected = JobFilter(queue="q", statuses=frozenset({JobStatus.DEAD}), name="n", tenant="t")
    assert options.query() == ListQuery(expected, 5, "c")
    assert ListOptions().query() == ListQuery(JobFilter(), 100, None)


@pytest.mark.parametrize(
    ("options", "code"),
    [
        (ListOptions(limit=0), "invalid_option"),
        (ListOptions(status="nope"), "invalid_option"),
        (ListOptions(queue="bad name"), "invalid_name"),
    ],
    ids=["limit", "status", "queue"],
)
def test_query_refuses_a_bad_option_before_the_store_is_asked(
    options: ListOptions, code: str
) -> None:
    with pytest.raises(JobConfigError) as refused:
        options.query()
    assert refused.value.code == code


def test_a_view_lists_with_its_tenant_bound() -> None:
    queue = SyncJobQueue(MemoryJobStore())
    queue.enqueue("report.build", tenant="acme")
    queue.enqueue("report.build", tenant="globex")
    view = queue.for_tenant("acme")
    assert [job.tenant for job in view.list().jobs] == ["acme"]
    with pytest.raises(JobConfigError, match="bound to tenant 'acme'"):
        view.list(tenant="globex")
