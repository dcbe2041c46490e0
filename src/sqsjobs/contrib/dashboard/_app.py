"""``make_dashboard``: the dashboard as a Starlette app, to mount or to serve on its own.

The app is assembled here: the routes (pages in ``_pages``), the templates and static
files shipped in this package, and one ASGI layer (``_Gate``) that every request passes
first. It refuses a Host the dashboard does not answer for (``_fence``), asks the auth
hook, refuses POSTs when actions are off, refuses an action from another site or with a
body past its limit (read here, before the route sees it), and adds the headers that
keep a page from running anything it did not ship: a Content-Security-Policy allowing
only this app's own script and style (no inline script, no eval), no framing, no MIME
sniffing. Jinja2 escapes every value it prints, so a job's name, error, payload or
result is shown as text, never read as markup; the CSP is the second wall.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...core.store import JobStore
from ...core.validation import integer, page_limit, seconds
from . import _figures as figures
from . import _pages as pages
from ._fence import Fence, Refusal, allowed_names, read_body, replaying, too_large
from ._guard import SAFE_METHODS, Auth, Guard
from ._redact import ErrorRedactor, Redaction, checked_redactor
from ._source import JobSource

PACKAGE = "sqsjobs.contrib.dashboard"
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


def make_dashboard(
    target: Any,
    *,
    actions: bool = False,
    auth: Auth | None = None,
    show_payloads: bool = True,
    refresh: float = 5.0,
    page_size: int = 50,
    title: str = "sqsjobs",
    secret: bytes | None = None,
    clock: Callable[[], float] | None = None,
    allowed_hosts: Iterable[str] = (),
    error_redactor: ErrorRedactor | None = None,
) -> Starlette:
    """A Starlette app showing ``target``'s jobs: a store, or a ``JobQueue``/``SyncJobQueue``.

    Only requests for the Host 127.0.0.1, localhost or ::1 (any port) are answered, and
    for the names in ``allowed_hosts``; another Host is a 400, so a site rebinding its
    name to this address (DNS rebinding) reads nothing. Mount it in a host app:
    ``app.mount("/jobs", make_dashboard(queue, auth=is_staff, allowed_hosts=[...]))``.

    Args:
        target: The store to show, or a producer (its store and its clock).
        actions: Offer retry, cancel, redrive, pause and resume; read-only if False.
        auth: Called with each request; it must return True (or an awaitable of True)
            to let it through, anything else is a 403. Left out, anyone who reaches the
            app may read it.
        show_payloads: False hides payloads, results, progress, idempotency keys and
            error messages (an error shows its exception's class).
        refresh: How often (seconds) a page updates its figures in place; 0: never.
        page_size: Jobs per page of a list, up to 1000.
        title: The name in each page's title and header.
        secret: The key of the CSRF tokens; the default, random per app, is right unless
            several processes serve one dashboard behind a load balancer.
        clock: Epoch seconds; left out, the queue's clock, else ``time.time``.
        allowed_hosts: Host names answered besides the loopback ones; ``["*"]``: any,
            for a host app that checks Host itself.
        error_redactor: Takes an error's text and returns what to show of it, payloads
            shown or hidden.

    Returns:
        The app, ready to mount or to serve (``uvicorn``).

    Raises:
        TypeError: ``target`` is neither a store nor a queue, or ``error_redactor`` is
            not callable.
        ValueError: An invalid ``refresh``, ``page_size`` or host name.
    """
    store: JobStore = getattr(target, "store", target)
    if not isinstance(store, JobStore):
        raise TypeError(f"make_dashboard needs a job store or a queue, not {type(target)!r}")
    settings = pages.Settings(
        actions=actions is True,
        show_payloads=show_payloads is not False,
        refresh=seconds(refresh, "refresh", code=None),
        page_size=page_limit(integer(page_size, "page_size", minimum=1, code=None)),
        title=title,
    )
    fence = Fence(allowed_names(allowed_hosts))
    redaction = Redaction(settings.show_payloads, checked_redactor(error_redactor))
    source = JobSource(
        store, clock or getattr(target, "clock", None) or time.time, settings.refresh
    )
    guard = Guard(auth=auth, actions=settings.actions, secret=secret)
    app = Starlette(routes=_routes())
    app.state.dashboard = pages.Dashboard(source, guard, settings, _templates(), redaction)
    app.add_middleware(_Gate, guard=guard, fence=fence)
    return app


def _routes() -> list[Route | Mount]:
    static = StaticFiles(packages=[(PACKAGE, "static")])
    return [
        Route("/", pages.overview, name="overview"),
        Route("/jobs", pages.job_list, name="jobs"),
        Route("/jobs/{job_id}", pages.job_detail, name="job"),
        Route("/batches/{batch_id}", pages.batch_detail, name="batch"),
        Route("/jobs/{job_id}/retry", pages.retry, methods=["POST"], name="retry"),
        Route("/jobs/{job_id}/cancel", pages.cancel, methods=["POST"], name="cancel"),
        Route("/dead", pages.dead_letters, name="dead"),
        Route("/dead/redrive", pages.redrive, methods=["POST"], name="redrive"),
        Route("/queues/{queue}/pause", pages.pause_queue, methods=["POST"], name="pause"),
        Route("/queues/{queue}/resume", pages.resume_queue, methods=["POST"], name="resume"),
        Mount("/static", app=static, name="static"),
    ]


def _templates() -> Jinja2Templates:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader(PACKAGE, "templates"),
        autoescape=True,  # every template, whatever its name: stored text is never markup
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(
        age=figures.age,
        instant=figures.instant,
        pretty_json=figures.pretty_json,
    )
    return Jinja2Templates(env=environment)


class _Gate:
    """The Host, auth, the read-only switch, an action's origin and size, the headers."""

    def __init__(self, app: ASGIApp, guard: Guard, fence: Fence) -> None:
        self.app = app
        self.guard = guard
        self.fence = fence

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        try:
            refusal, receive = await self._admit(request, receive)
        except ClientDisconnect:
            return  # no one is left to answer
        if refusal is not None:
            status, text = refusal
            response = PlainTextResponse(text, status_code=status, headers=SECURITY_HEADERS)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, _with_headers(send))

    async def _admit(self, request: Request, receive: Receive) -> tuple[Refusal | None, Receive]:
        """Why this request is refused (``None``: it is not), and the channel the route reads.

        An action's body is read here, up to its limit, and replayed to the route.
        """
        refusal = self.fence.host_refusal(request) or await self._access_refusal(request)
        if refusal is not None or request.method in SAFE_METHODS:
            return refusal, receive
        refusal = self.fence.action_refusal(request)
        if refusal is not None:
            return refusal, receive
        body = await read_body(receive)
        if body is None:
            return (413, too_large("longer")), receive
        return None, replaying(body, receive)

    async def _access_refusal(self, request: Request) -> Refusal | None:
        if not await self.guard.allowed(request):
            return 403, "Forbidden: this dashboard's access check refused the request."
        if request.method not in SAFE_METHODS and not self.guard.actions:
            return 403, "Forbidden: this dashboard is read-only (actions are off)."
        return None


def _with_headers(send: Send) -> Send:
    """``send`` adding the security headers to a response that does not set them itself."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            present = {name.lower() for name, _ in headers}
            for name, value in SECURITY_HEADERS.items():
                if name.encode() not in present:
                    headers.append((name.encode(), value.encode()))
            message["headers"] = headers
        await send(message)

    return sending
