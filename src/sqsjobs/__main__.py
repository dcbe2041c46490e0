"""The ``sqsjobs`` console script (and ``python -m sqsjobs``), installed with every install.

The command line itself (``sqsjobs.cli``: click, rich, the worker and its cron parser)
comes with the ``worker`` extra. Without it, ``sqsjobs`` prints one line saying what to
install and exits 2, instead of a traceback ending in "No module named 'click'": when
``sqsjobs.cli`` imports (click) or when the command given loads its module (rich, the
cron parser, aiobotocore; ``sqsjobs --help`` and ``--version`` load none). A missing
module that is not the extra's is a broken install, not a missing extra: its traceback is
left alone.
"""

from __future__ import annotations

import sys

# Packages of the ``worker`` extra that ``sqsjobs.cli`` imports.
WORKER_EXTRA = frozenset({"click", "rich", "croniter", "aioboto3", "aiobotocore", "aiohttp"})
MISSING_EXTRA = "sqsjobs: the command line needs the worker extra: pip install 'sqsjobs[worker]'"


def main() -> int:
    try:
        from .cli import main as command_line

        command_line(prog_name="sqsjobs")
    except ImportError as missing:  # ModuleNotFoundError, or the package root's own
        if (missing.name or "").partition(".")[0] not in WORKER_EXTRA:
            raise
        print(MISSING_EXTRA, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
