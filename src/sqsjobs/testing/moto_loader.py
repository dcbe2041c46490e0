"""moto, loaded for the emulator without enrolling the process's botocore clients in
moto's in-process mock.

Importing moto appends its stubber to botocore's ``BUILTIN_HANDLERS``: from then on
every client the process makes, those for real AWS included, carries a ``before-send``
handler of moto's. It is idle until ``mock_aws`` starts, but it is there, in each
request's path and in what an instrumentation or a probe of the client's handlers sees.
The emulator is moto served over HTTP and never needs it.

So when this module is what first imports moto, the stubber is taken out again and put
back the moment anything makes or starts moto's own mock (``mock_aws()``, which needs it
in every client made from then on). When moto was imported before, its state is the
importer's and is left as it is.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from botocore.handlers import BUILTIN_HANDLERS  # type: ignore[import-untyped]

_LOCK = threading.Lock()
MOTO_CORE = "moto.core.models"


def _load() -> None:
    """Import moto's server, leaving botocore's built-in handlers as they were."""
    with _LOCK:
        first = MOTO_CORE not in sys.modules
        before = list(BUILTIN_HANDLERS)
        import moto.server  # noqa: F401  (the import under watch)
        from moto.core import models

        added = [handler for handler in BUILTIN_HANDLERS if handler not in before]
        if first and added:
            for handler in added:
                BUILTIN_HANDLERS.remove(handler)
            _restore_on_mock(models.MockAWS, added)


def _restore_on_mock(mock: Any, handlers: list[Any]) -> None:
    """Put ``handlers`` back when a ``MockAWS`` is made or started, as moto's import would
    have left them: a client made after that is mocked, as moto documents."""
    made, start = mock.__init__, mock.start

    def restore() -> None:
        for handler in handlers:
            if handler not in BUILTIN_HANDLERS:
                BUILTIN_HANDLERS.append(handler)

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        restore()
        made(self, *args, **kwargs)

    def started(self: Any, *args: Any, **kwargs: Any) -> None:
        restore()
        start(self, *args, **kwargs)

    mock.__init__, mock.start = init, started


_load()

from moto.moto_server.werkzeug_app import MotoRequestHandler  # noqa: E402  (after _load)
from moto.server import ThreadedMotoServer  # noqa: E402

__all__ = ["MotoRequestHandler", "ThreadedMotoServer"]
