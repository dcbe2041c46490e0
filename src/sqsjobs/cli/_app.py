"""The application's handlers, named ``MODULE:ATTRIBUTE`` on the command line.

``sqsjobs worker app.jobs:registry`` runs them; ``sqsjobs enqueue --app app.jobs:registry``
gives the producer the same registry, so the handler's declared options land in the
record and a name or payload no worker could run is refused before anything is written.
Both import it here, one way: as uvicorn and rq name theirs, with the working directory
importable. A value that names nothing usable is bad usage (click's exit 2), said in one
line: no such module, no such attribute, not a registry.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from typing import Any

import click

from .. import Handler, JobConfigError, JobRegistry

Handlers = JobRegistry | Mapping[str, Handler]


def load_handlers(ctx: click.Context, param: click.Parameter, value: str) -> Handlers:
    """Import ``MODULE:ATTRIBUTE``; it must be a ``JobRegistry`` or a mapping of handlers."""
    module_name, _, attribute = value.partition(":")
    if not module_name or not attribute:
        raise click.BadParameter(
            f"expected MODULE:REGISTRY, e.g. myapp.jobs:registry; got {value!r}", ctx, param
        )
    found: Any = import_module(module_name, ctx, param)
    for part in attribute.split("."):
        if not hasattr(found, part):
            message = f"module {module_name!r} has no attribute {attribute!r}"
            raise click.BadParameter(message, ctx, param)
        found = getattr(found, part)
    if not isinstance(found, JobRegistry | Mapping):
        message = (
            f"{value} is of type {type(found).__name__}, not a JobRegistry "
            "or a mapping of job names to handlers"
        )
        raise click.BadParameter(message, ctx, param)
    return found


def load_registry(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> JobRegistry | None:
    """``load_handlers``, as the ``JobRegistry`` a producer takes; ``None`` if not given."""
    if value is None:
        return None
    try:
        return JobRegistry.from_handlers(load_handlers(ctx, param, value))
    except JobConfigError as refused:  # an empty registry, a mapping with a bad handler
        raise click.BadParameter(str(refused), ctx, param) from None


def import_module(name: str, ctx: click.Context, param: click.Parameter) -> Any:
    """Import ``name`` as ``python -m`` would: the working directory comes first."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is None or not (name == error.name or name.startswith(f"{error.name}.")):
            raise  # the module exists but imports something missing: its own error
        message = f"no module named {name!r} (run from the directory that has it)"
        raise click.BadParameter(message, ctx, param) from None
