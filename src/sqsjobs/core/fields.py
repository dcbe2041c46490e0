"""The job fields that are data and nothing more, declared once.

A data field is given at enqueue (an option of the same name), checked there, kept on
the record and returned by every read; no rule of the lifecycle, the claim or the
listing reads it. Each store's codec iterates ``DATA_FIELDS`` (``SqsJobStore`` keeps a
field as one attribute of compact JSON text, the memory store as JSON text too, so no
caller shares a container with it), ``prepare`` checks and copies them from the
request, and ``--json``, the dashboard and ``jobs show`` show every ``Job`` field. A
field left at its ``empty`` value is not stored, so records without it read as they
did. Adding one (docs/architecture.md, "Adding a job option"): the ``Job`` field, the
option (``EnqueueRequest`` and ``CronOptions``), its row here with its check, and the
CLI's flag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from .errors import JobConfigError

LABELS_MAX = 10
LABEL_KEY_MAX = 64
LABEL_VALUE_MAX = 128


class DataField(NamedTuple):
    """One data field: its name (the ``Job`` field, the enqueue option and the stored
    attribute), the check an enqueue runs on the option's value (``None``: not given;
    it returns what is kept), and the value that is not stored."""

    name: str
    check: Callable[[Any], Any]
    empty: Any


def check_labels(labels: object) -> dict[str, str]:
    """A job's labels: free-form tags to find and tell jobs apart by (``{"team":
    "billing", "source": "import-7"}``), at most ``LABELS_MAX``, each key 1 to
    ``LABEL_KEY_MAX`` and each value up to ``LABEL_VALUE_MAX`` printable characters."""
    if labels is None:
        return {}
    if not isinstance(labels, Mapping):
        raise JobConfigError(
            "invalid_option",
            f"labels must be a mapping of text to text, not {type(labels).__name__}",
        )
    if len(labels) > LABELS_MAX:
        raise JobConfigError(
            "invalid_option", f"labels hold at most {LABELS_MAX} entries, not {len(labels)}"
        )
    checked: dict[str, str] = {}
    for key, value in labels.items():
        _check_text(key, "label key", 1, LABEL_KEY_MAX)
        _check_text(value, f"label {key!r}", 0, LABEL_VALUE_MAX)
        checked[key] = value
    return checked


def _check_text(value: object, what: str, shortest: int, longest: int) -> None:
    if not isinstance(value, str):
        raise JobConfigError("invalid_option", f"{what} must be text, not {type(value).__name__}")
    if not shortest <= len(value) <= longest or not value.isprintable():
        raise JobConfigError(
            "invalid_option",
            f"{what} must be {shortest} to {longest} printable characters, not {value!r:.80}",
        )


DATA_FIELDS: tuple[DataField, ...] = (DataField("labels", check_labels, {}),)
