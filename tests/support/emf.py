"""Reading CloudWatch Embedded Metric Format lines back, checked against the EMF spec."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

UNITS = {"Seconds", "Count"}


def documents(output: str, namespace: str = "sqsjobs") -> list[dict[str, Any]]:
    """Every EMF document among ``output``'s lines (other lines are skipped), each checked."""
    found = []
    for line in output.splitlines():
        if not line.startswith('{"_aws"'):
            continue
        document = json.loads(line)
        check(document, namespace)
        found.append(document)
    return found


def check(document: dict[str, Any], namespace: str) -> None:
    """What CloudWatch requires of a document before it extracts any metric from it."""
    meta = document["_aws"]
    assert isinstance(meta["Timestamp"], int) and meta["Timestamp"] > 1_600_000_000_000
    for directive in meta["CloudWatchMetrics"]:
        assert directive["Namespace"] == namespace
        assert 1 <= len(directive["Metrics"]) <= 100
        for dimension_set in directive["Dimensions"]:
            assert 1 <= len(dimension_set) <= 30
            assert all(isinstance(document[name], str) for name in dimension_set)
        for metric in directive["Metrics"]:
            assert metric["Unit"] in UNITS
            value = document[metric["Name"]]
            assert isinstance(value, int | float) and not isinstance(value, bool)


def totals(docs: list[dict[str, Any]]) -> Counter[tuple[str, str, str]]:
    """Sum of each metric per (queue, job name or "", metric name)."""
    summed: Counter[tuple[str, str, str]] = Counter()
    for document in docs:
        for directive in document["_aws"]["CloudWatchMetrics"]:
            for metric in directive["Metrics"]:
                name = metric["Name"]
                summed[(document["Queue"], document.get("JobName", ""), name)] += document[name]
    return summed


def values(docs: list[dict[str, Any]], metric: str) -> list[float]:
    return [document[metric] for document in docs if metric in document]
