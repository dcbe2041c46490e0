"""``sqsjobs dashboard``: the web dashboard of a store, served on 127.0.0.1 until Ctrl-C.

The store comes from the same options as every other command (``--stack``, or the
environment). The server binds the loopback address only and has no login: whoever can
open a connection on this machine can read the jobs, and no one else can. A web page
cannot borrow that either: the dashboard answers only for the Host 127.0.0.1, localhost
and ::1, so a site rebinding its name to this address is refused; ``--allowed-host``
adds the name a reverse proxy on this machine serves it under (never ``*``: nothing
stands between a browser and this port). A dashboard for others belongs inside an app
that checks who is asking (``make_dashboard(auth=)``, docs/how-to/dashboard.md). It is
read-only unless ``--actions`` is given.

``serve_dashboard`` is shared with ``sqsjobs demo --dashboard``: it binds the socket
first, so port 0 (a free one) still prints the real address, then runs uvicorn on it.
uvicorn replays the signal that stopped it once it is done; the handlers in place while
it runs (``stop_signals``) take that replay, so Ctrl-C ends the command cleanly.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import click

from ._config import StoreConfig, store_options
from ._errors import CommandFailed
from ._local import stop_signals

HOST = "127.0.0.1"
SOMAXCONN = 2048  # uvicorn's own backlog
DEFAULT_PORT = 8321
EXTRA_HINT = "the dashboard needs the dashboard extra: pip install 'sqsjobs[dashboard]'"


def port_option(default: int) -> Callable[[Any], Any]:
    return click.option(
        "--port",
        type=click.IntRange(0, 65535),
        metavar="PORT",
        default=default,
        show_default=True,
        help=f"Port on {HOST} to serve the dashboard on; 0 picks a free one.",
    )


@click.command()
@port_option(DEFAULT_PORT)
@click.option(
    "--actions",
    is_flag=True,
    help="Allow retry, cancel and redrive from the pages (without it, read-only).",
)
@click.option(
    "--hide-payloads",
    is_flag=True,
    help="Show no job payloads, results, idempotency keys or error messages (errors show "
    "their exception's class).",
)
@click.option(
    "--refresh",
    type=click.FloatRange(0),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="How often the pages update in place; 0 for never.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    callback=lambda context, parameter, names: checked_hosts(names),
    help="Also answer requests for this Host (repeatable): the name a reverse proxy on "
    "this machine serves the dashboard under. 127.0.0.1, localhost and ::1 always work.",
)
@store_options
def dashboard(
    port: int,
    actions: bool,
    hide_payloads: bool,
    refresh: float,
    allowed_hosts: tuple[str, ...],
    store: StoreConfig,
) -> None:
    """Serve a web dashboard of the queues, jobs and dead letters on 127.0.0.1."""
    make_dashboard = dashboard_factory()
    opened = store.open()
    app = make_dashboard(
        opened,
        actions=actions,
        show_payloads=not hide_payloads,
        refresh=refresh,
        allowed_hosts=allowed_hosts,
    )
    serve_dashboard(app, port, actions=actions, closing=opened.aclose, hosts=allowed_hosts)


def checked_hosts(names: tuple[str, ...]) -> tuple[str, ...]:
    """``--allowed-host`` values, each a host name; a usage error names the wrong one."""
    if "*" in names:
        raise click.UsageError(
            "--allowed-host takes host names, not '*': the command serves 127.0.0.1 "
            "directly, so any web page could rebind its own name to it"
        )
    try:
        from ..contrib.dashboard import allowed_names
    except ImportError:
        return names  # the command itself says which extra to install
    try:
        allowed_names(names, "--allowed-host")
    except ValueError as wrong:
        raise click.UsageError(str(wrong)) from None
    return names


def dashboard_factory() -> Callable[..., Any]:
    """``make_dashboard``, or a one-line error naming the extra to install."""
    try:
        import uvicorn  # noqa: F401  (only checked for here; serve_dashboard runs it)

        from ..contrib.dashboard import make_dashboard
    except ImportError as missing:  # uvicorn's ModuleNotFoundError, or the package's own
        raise CommandFailed(f"{EXTRA_HINT} ({missing.name} is not installed)") from missing
    return make_dashboard


def bind(port: int) -> socket.socket:
    """A listening socket on the loopback address (port 0: a free one)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((HOST, port))
        listener.listen(SOMAXCONN)  # now: a browser opened at the printed URL waits, not fails
    except OSError as error:
        listener.close()
        raise CommandFailed(
            f"cannot listen on {HOST}:{port}: {error.strerror or error}; "
            "pick another --port, or 0 for a free one"
        ) from error
    return listener


def serve_dashboard(
    app: Any,
    port: int,
    *,
    actions: bool,
    closing: Callable[[], Awaitable[None]] | None = None,
    hosts: Sequence[str] = (),
) -> None:
    """Serve ``app`` on 127.0.0.1:``port`` until SIGINT or SIGTERM, then run ``closing``.

    ``hosts`` are the names ``app`` answers for besides the loopback ones, to print.
    """
    import uvicorn

    listener = bind(port)
    url = f"http://{HOST}:{listener.getsockname()[1]}/"
    mode = "actions on" if actions else "read-only; --actions allows retry, cancel and redrive"
    click.echo(f"Dashboard serving on {url} ({mode})")
    if hosts:
        click.echo(f"Also answering for Host {', '.join(hosts)} (any port).")
    click.echo("Press Ctrl-C (or send SIGTERM) to stop it.")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)

    async def run() -> None:
        try:
            await server.serve(sockets=[listener])
        finally:
            if closing is not None:
                await closing()

    with stop_signals():
        asyncio.run(run())
    listener.close()
    click.echo("Dashboard stopped.")
