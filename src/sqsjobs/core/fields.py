"""The job fields that are data and nothing more, declared once.

A data field is given at enqueue (an option of the same name), checked there, kept on
the record and returned by every read; no rule of the lifecycle, the claim or the
listing reads it. Each store's codec iterates ``DATA_FIELDS`` (``SqsJobStore`` keeps a
field as one attribute of compact JSON text, the memory store as JSON text too, so no
caller shares a container with it), ``prepare`` checks and copies them from the
request, and ``--json``, the dashboard and ``jobs show`` show every ``Job`` field. A
field left at its ``empty`` value is not stored, so records without it read as they
did. Adding one (docs/explanation/architecture.md, "Adding a job option"): the ``Job`` field, the
option (``EnqueueRequest`` and ``CronOptions``), its row here with its check, and the
CLI's flag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, NamedTuple

from .errors import JobConfigError

LABELS_MAX = 10
LABEL_KEY_MAX = 64
LABEL_VALUE_MAX = 128
PARENTS_MAX = 100  # parents a job may wait for (a batch's callback waits for any number)
JOB_ID_MAX = 128  # what a message body may carry as an id (``aws.wire.sqs.parse_body``)


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


def check_after(after: object) -> list[str]:
    """A job's parents (``enqueue(after=[...])``): 1 to ``PARENTS_MAX`` distinct job ids,
    each as ``enqueue`` returned it. Whether each is a job is the store's to say, at put.
    """
    if after is None:
        return []
    if isinstance(after, str | bytes) or not isinstance(after, Sequence | AbstractSet):
        raise JobConfigError(
            "invalid_option",
            f"after must be a list of job ids, not {type(after).__name__}",
        )
    parents = list(after)
    if not 1 <= len(parents) <= PARENTS_MAX:
        raise JobConfigError(
            "invalid_option",
            f"after names 1 to {PARENTS_MAX} parent jobs, not {len(parents)}; to wait for "
            "more, enqueue them as a batch with a callback (queue.batch)",
        )
    for parent in parents:
        _check_text(parent, "a parent job id in after", 1, JOB_ID_MAX)
        if any(character.isspace() for character in parent):
            raise JobConfigError(
                "invalid_option", f"parent job id {parent!r:.80} in after has whitespace"
            )
    if len(set(parents)) != len(parents):
        twice = sorted({p for p in parents if parents.count(p) > 1})
        raise JobConfigError("invalid_option", f"after names job {twice[0]!r} more than once")
    return parents


def may_wait_for(child_tenant: str | None, parent_tenant: str | None) -> bool:
    """Whether a job may name another as its parent: a tenant's job only its own
    tenant's jobs, so one tenant cannot learn of, or wait on, another's."""
    return child_tenant is None or child_tenant == parent_tenant


def unknown_parent(parent_id: str) -> JobConfigError:
    """The refusal of a parent a job may not wait for: no such job, one past its
    retention, or another tenant's (said alike, so the answer reveals nothing)."""
    return JobConfigError(
        "invalid_option",
        f"Unknown parent job {parent_id!r} in after: no job has that id (or its record is "
        "past its retention); pass ids that enqueue returned",
    )


# A field's declaration; ``after`` is data too: the rules read the store's own account of
# which parents a job still waits for, and its status ``waiting``, never this list.
DATA_FIELDS: tuple[DataField, ...] = (
    DataField("labels", check_labels, {}),
    DataField("after", check_after, []),
)
