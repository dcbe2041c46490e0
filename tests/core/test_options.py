"""The enqueue options are declared twice, as ``EnqueueRequest``'s fields (a value for
``enqueue_many``) and as the ``EnqueueOptions`` keywords of ``enqueue()``: these tests
fail when the two drift apart, in names or in types, and when a face's docs or a cron's
options forget one (``sqsjobs.core.options``)."""

from __future__ import annotations

import dataclasses
import inspect
import typing

from sqsjobs.core import options
from sqsjobs.core.options import CronOptions, EnqueueOptions
from sqsjobs.core.requests import ENQUEUE_OPTIONS, EnqueueRequest

NOT_OPTIONS = ("name", "payload")  # what enqueue() takes positionally


def request_types() -> dict[str, object]:
    hints = typing.get_type_hints(EnqueueRequest)
    return {f.name: hints[f.name] for f in dataclasses.fields(EnqueueRequest)}


def test_every_request_field_is_an_enqueue_keyword_of_the_same_type() -> None:
    fields = {name: kind for name, kind in request_types().items() if name not in NOT_OPTIONS}
    keywords = typing.get_type_hints(EnqueueOptions)
    assert fields == keywords
    assert frozenset(keywords) == ENQUEUE_OPTIONS


def test_a_cron_takes_every_option_but_the_key_its_tick_sets_parents_and_debouncing() -> None:
    assert set(typing.get_type_hints(EnqueueOptions)) - set(typing.get_type_hints(CronOptions)) == {
        "idempotency_key",
        "after",
        "debounce_key",
        "debounce",
    }


def test_the_module_docs_name_every_option() -> None:
    documented = {
        line.split()[0]
        for line in inspect.getdoc(options).splitlines()  # type: ignore[union-attr]
        if line.startswith("    ") and line.split()
    }
    assert documented == set(ENQUEUE_OPTIONS)


def test_every_option_has_a_default_so_a_request_needs_only_a_name() -> None:
    request = EnqueueRequest("report.build")
    for field in dataclasses.fields(EnqueueRequest):
        if field.name != "name":
            assert field.default is not dataclasses.MISSING, field.name
    assert request.payload is None and request.priority == 0
