"""What follows a job's ending write, wherever it is made: its waiting children settled
(``waiting``) and its end counted in its batch (``batches``).

Each write that ends a job (complete, dead, cancel, a lease over on the last attempt, an
abandoned run) returns the record it left, which says both what waits for it and which
batch it counts in. Both steps can be repeated: an outcome's retry takes them again.
"""

from __future__ import annotations

from ..wire.items import Attributes
from ..wire.layout import Layout
from ..wire.protocol import Flow
from . import batches, waiting


def ended(layout: Layout, item: Attributes | None, now: float) -> Flow[None]:
    yield from waiting.ended(layout, item, now)
    yield from batches.ended(layout, item, now)
