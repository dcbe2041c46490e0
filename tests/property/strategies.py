"""Hypothesis strategies for payloads: what validation must accept and what it must refuse."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)

json_values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)

not_json = st.sampled_from(
    [
        float("nan"),
        float("inf"),
        -float("inf"),
        b"bytes",
        {1, 2},
        (1, 2),
        datetime(2026, 1, 1, tzinfo=UTC),
        Decimal("1.5"),
        object(),
        {1: "non-string key"},
        {("a",): "tuple key"},
    ]
)


@st.composite
def with_one_bad_leaf(draw: st.DrawFn) -> Any:
    """A JSON value with one non-JSON value buried somewhere inside it."""
    bad = draw(not_json)
    depth = draw(st.integers(0, 3))
    value: Any = bad
    for _ in range(depth):
        if draw(st.booleans()):
            value = [draw(json_values), value]
        else:
            value = {draw(st.text(max_size=5)): value}
    return value
