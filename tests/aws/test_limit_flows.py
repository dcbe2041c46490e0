"""The limit slots' flows on a script: which slots a take tries, and what a refusal says."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from sqsjobs.aws.flows.limits import take_slot
from sqsjobs.aws.wire.protocol import Call, ConditionFailed

from .fakes import NOW, layout, refused


def held(holder: str, until: float) -> ConditionFailed:
    return refused({"holder": {"S": holder}, "lease_until": {"N": repr(until)}})


def run(
    flow: Generator[Call, Any, Any], answers: list[ConditionFailed | None]
) -> tuple[Any, list[Call]]:
    """Drive ``flow``, answering its calls in turn: None accepts, an error refuses."""
    calls: list[Call] = []
    try:
        call = next(flow)
        while True:
            calls.append(call)
            answer = answers[len(calls) - 1]
            call = flow.throw(answer) if answer is not None else flow.send({})
    except StopIteration as done:
        return done.value, calls


def slot_of(call: Call) -> str:
    return str(call.params["Item"]["pk"]["S"])


def test_a_take_stops_at_the_first_slot_it_holds() -> None:
    flow = take_slot(layout(), "concurrency/report.build", [2, 0, 1], "me", NOW + 30, NOW)
    taken, calls = run(flow, [held("other", NOW + 9), None])
    assert taken == (0, None)
    assert [slot_of(c) for c in calls] == [
        "limit#concurrency/report.build#2",
        "limit#concurrency/report.build#0",
    ]


def test_a_take_that_finds_every_slot_held_says_when_the_first_frees() -> None:
    flow = take_slot(layout(), "rate/mail.send/acme", [1, 0], "me", NOW + 1, NOW)
    taken, calls = run(flow, [held("a", NOW + 0.7), held("b", NOW + 0.2)])
    assert taken == (None, NOW + 0.2)
    assert len(calls) == 2


def test_a_retried_take_refused_by_its_own_first_try_holds_the_slot() -> None:
    """botocore retries a put whose response was lost; the first one took the slot."""
    flow = take_slot(layout(), "concurrency/x", [0, 1], "me", NOW + 30, NOW)
    taken, calls = run(flow, [held("me", NOW + 30)])
    assert taken == (0, None) and len(calls) == 1
