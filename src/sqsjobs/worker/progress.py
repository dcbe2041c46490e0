"""The progress a run's handler reported, kept until a store write carries it.

``ctx.progress`` writes nothing itself (``core.progress``): the value waits here for the
run's next heartbeat, or for its outcome if that comes first. A value reported while a
heartbeat is in flight stays unsent, so the next write carries the newest one.
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from ..core.errors import JobConfigError
from ..core.progress import checked_progress
from ..core.store import JobStore

Riding = dict[str, JsonValue]  # the ``progress=`` keyword a store write carries, or nothing


def keeps_progress(store: JobStore) -> bool:
    """Whether ``store`` takes ``progress=`` on its heartbeat and outcome writes: both of
    sqsjobs's stores do; a store of one's own says so with ``keeps_progress = True``."""
    return getattr(store, "keeps_progress", False) is True


class Progress:
    """The latest value a run reported, and whether a write has carried it yet."""

    def __init__(self, store: JobStore) -> None:
        self._store_name = None if keeps_progress(store) else type(store).__name__
        self._value: JsonValue | None = None
        self._reported = 0  # values reported so far
        self._carried = 0  # of them, up to which one a write has carried

    def report(self, value: Any) -> None:
        if self._store_name is not None:
            raise JobConfigError(
                "invalid_option",
                f"{self._store_name} does not keep progress: ctx.progress needs a store "
                "whose heartbeat and outcome writes take progress= (keeps_progress = True)",
            )
        self._value = checked_progress(value)
        self._reported += 1

    def riding(self) -> tuple[Riding, int]:
        """The keyword for the next write (empty when nothing is unsent), and a mark to
        pass to ``carried`` once that write succeeded."""
        if self._reported == self._carried:
            return {}, self._carried
        return {"progress": self._value}, self._reported

    def carried(self, mark: int) -> None:
        self._carried = max(self._carried, mark)
