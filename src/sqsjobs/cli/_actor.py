"""Who runs a command, as a job's history names an operator: ``cli:{user}@{host}``.

``jobs retry``, ``jobs cancel`` and ``dlq redrive`` note it in the history of each job
they act on, so a dead job sent back by hand says by whom. It is what the machine says
(the login name, the host name), not a verified identity: on a shared host, a shared
account names the account.
"""

from __future__ import annotations

import getpass
import socket

from ..core.text import safe_line


def operator() -> str:
    """``cli:{user}@{host}``; ``unknown`` for a part the system will not tell."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError, ImportError):  # no login name: a container's bare uid
        user = "unknown"
    host = socket.gethostname() or "unknown"
    return safe_line(f"cli:{user}@{host}")
