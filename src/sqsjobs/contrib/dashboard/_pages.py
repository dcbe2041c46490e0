"""The dashboard's pages and actions: each reads the request, asks the source, renders.

Pages are GETs and change nothing. Actions are POSTs whose form carries the CSRF token
(``_guard``); each answers with a redirect (303) to the page it came from, with a
``done`` code that the page turns into one of the fixed notices below, so no text from
the request is ever echoed into a page.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from ...core.attention import LONG_WAIT
from ...core.errors import JobConfigError
from ...core.history import summary
from ...core.lifecycle import CANCELLABLE, DEAD
from ...core.models import JobStatus
from ...core.requests import JobFilter, ended_only
from ...core.text import redact_credentials
from ...core.times import utc
from . import _figures as figures
from ._guard import FIELD, Guard
from ._redact import Redaction
from ._source import JobSource

NOTICES = {
    "retried": "Retried: the job is queued again with its attempts reset.",
    "not-retried": "Not retried: only a dead job within its retention can be retried.",
    "cancelled": "Cancelled.",
    "not-cancelled": "Not cancelled: only a queued, delayed or running job can be cancelled.",
    "redriven": "Redrive done: dead jobs sent back to their queues: ",
    "paused": "Paused: within seconds no worker starts a job of this queue; running jobs "
    "finish and enqueues are kept.",
    "resumed": "Resumed: workers start this queue's jobs again within seconds.",
}
STATUSES = [status.value for status in JobStatus]
ORDERS = {"newest": True, "oldest": False}  # ?order=: which end of a list comes first
FORM_TYPE = "application/x-www-form-urlencoded"
MAX_FORM_FIELDS = 8


@dataclass(frozen=True)
class Settings:
    """What a dashboard shows and allows; see ``make_dashboard``."""

    actions: bool
    show_payloads: bool
    refresh: float
    page_size: int
    title: str


@dataclass(frozen=True)
class Dashboard:
    """Everything a page needs, kept in the app's state."""

    source: JobSource
    guard: Guard
    settings: Settings
    templates: Jinja2Templates
    redaction: Redaction


def _dashboard(request: Request) -> Dashboard:
    found: Dashboard = request.app.state.dashboard
    return found


def _path(request: Request, name: str, **params: str) -> str:
    """A route's path (no scheme or host), right under whatever prefix the app is mounted."""
    return request.url_for(name, **params).path


def _notice(request: Request) -> str | None:
    done = request.query_params.get("done", "")
    text = NOTICES.get(done)
    if text is not None and done == "redriven":
        count = request.query_params.get("n", "")
        text += count if count.isdigit() else "?"
    return text


def _render(request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
    dashboard = _dashboard(request)
    session = dashboard.guard.session(request)
    url = request.url.remove_query_params(["done", "n"])
    now = dashboard.source.clock()
    for name, default in (("failure", None), ("stale_for", 0.0), ("retrying", False)):
        context.setdefault(name, default)
    context.update(
        settings=dashboard.settings,
        csrf_field=FIELD,
        csrf_token=dashboard.guard.token(session),
        notice=_notice(request),
        here=url.path + (f"?{url.query}" if url.query else ""),
        path=lambda name, **params: _path(request, name, **params),
        now=now,
        updated=figures.instant(utc(now)),
        relative=figures.relative,
        statuses=STATUSES,
        cancellable=CANCELLABLE,
        dead=DEAD,
        can_retry=dashboard.source.can_retry,
        shown_error=dashboard.redaction.error,
        shown_traceback=dashboard.redaction.traceback,
        errors_cut=dashboard.redaction.errors_cut,
    )
    response = dashboard.templates.TemplateResponse(
        request, template, context, status_code=status_code
    )
    dashboard.guard.keep_session(request, response, session)
    return response


def _filter(request: Request, *, dead_only: bool = False) -> JobFilter:
    """The list filters and order from the query string; an unknown status or order is a
    ``JobConfigError``.

    Without ``order``, jobs that ended (a dead, completed or cancelled list) come newest
    first: what just failed is what an operator opens the page for. Other lists run
    oldest first, the order the work will run in.
    """
    query = request.query_params
    status = query.get("status", "")
    if status and status not in STATUSES:
        raise JobConfigError(
            "invalid_option", f"unknown status {status!r}; one of {', '.join(STATUSES)}"
        )
    order = query.get("order", "")
    if order and order not in ORDERS:
        raise JobConfigError("invalid_option", f"unknown order {order!r}; newest or oldest")
    statuses = frozenset({DEAD}) if dead_only else None
    if status and not dead_only:
        statuses = frozenset({JobStatus(status)})
    return JobFilter(
        queue=query.get("queue") or None,
        statuses=statuses,
        name=query.get("name") or None,
        tenant=None if dead_only else query.get("tenant") or None,
        newest_first=ORDERS[order] if order else ended_only(statuses),
    )


async def overview(request: Request) -> Response:
    """The queues; while the store cannot be read, the last figures read, with their age."""
    source = _dashboard(request).source
    failure: dict[str, Any] = {}
    try:
        found = await source.overview()
    except Exception as error:  # unreachable, throttled, refused: say so, never a bare 500
        if source.last_overview is None:
            return _unreadable(request, error)
        found, read_at = source.last_overview
        failure = {"failure": _explained(error), "stale_for": source.clock() - read_at}
    totals = figures.status_totals({queue.queue: queue.counts for queue in found.queues})
    return _render(
        request, "overview.html", overview=found, totals=totals, long_wait=LONG_WAIT, **failure
    )


def _unreadable(request: Request, error: Exception) -> Response:
    """The store failed and there is nothing read before to show: what failed, and the
    fix where it is known. A refresh (htmx) gets it with 200, so it replaces the page's
    content instead of being dropped; the page tries again at its next refresh."""
    status = 200 if request.headers.get("HX-Request") == "true" else 503
    return _render(request, "error.html", status, message=_explained(error), retrying=True)


def _explained(error: Exception) -> str:
    from ...aws.explain import explained, one_line  # botocore's errors: loaded on a failure

    return redact_credentials(explained(error, {}) or one_line(error))


async def _listing(request: Request, template: str, *, dead_only: bool) -> Response:
    dashboard = _dashboard(request)
    query = request.query_params
    cursor = query.get("cursor") or None
    try:
        filter = _filter(request, dead_only=dead_only)
        page = await dashboard.source.page(filter, cursor, dashboard.settings.page_size)
        extra: dict[str, Any] = {}
        if dead_only:
            extra["depths"] = await dashboard.source.dead_letter_depths()
    except JobConfigError as refused:
        return _render(request, "error.html", 400, message=str(refused))
    except Exception as error:
        return _unreadable(request, error)
    args = {key: query.get(key, "") for key in ("queue", "status", "name", "tenant", "order")}
    return _render(
        request,
        template,
        jobs=page.jobs,
        next_cursor=page.next_cursor,
        first_page=cursor is None,
        newest_first=filter.newest_first,
        args=args,
        link_args={key: value for key, value in args.items() if value},
        queues=await dashboard.source.queue_names(page.jobs),
        **extra,
    )


async def job_list(request: Request) -> Response:
    return await _listing(request, "jobs.html", dead_only=False)


async def dead_letters(request: Request) -> Response:
    return await _listing(request, "dead.html", dead_only=True)


async def job_detail(request: Request) -> Response:
    job_id = request.path_params["job_id"]
    try:
        job = await _dashboard(request).source.get(job_id)
    except Exception as error:
        return _unreadable(request, error)
    if job is None:
        return _render(request, "missing.html", 404, job_id=job_id)
    batch = None if job.batch_id is None else await _dashboard(request).source.batch(job.batch_id)
    return _render(
        request,
        "job.html",
        job=job,
        batch=batch,
        timeline=figures.timeline(job),
        said=summary,  # an entry of its history, in the words ``jobs show`` uses
        revived=figures.revival(job),
    )


async def batch_detail(request: Request) -> Response:
    """A batch's figures: how its jobs ended, a bar of how far it has come, its callbacks."""
    batch_id = request.path_params["batch_id"]
    try:
        batch = await _dashboard(request).source.batch(batch_id)
    except Exception as error:
        return _unreadable(request, error)
    if batch is None:
        return _render(request, "missing.html", 404, job_id=batch_id, what="batch")
    return _render(request, "batch.html", batch=batch)


async def _checked_form(request: Request) -> dict[str, str] | None:
    """The action's form if its CSRF token is right, else ``None``.

    The forms are small and URL-encoded (no files), so they are parsed here with the
    standard library rather than through a multipart parser the extra would have to bring.
    The body was read, up to its limit, before the route ran (``_fence``).
    """
    if request.headers.get("content-type", "").split(";")[0].strip() != FORM_TYPE:
        return None
    body = await request.body()
    try:
        pairs = parse_qsl(
            body.decode("utf-8"), max_num_fields=MAX_FORM_FIELDS, strict_parsing=False
        )
    except (UnicodeDecodeError, ValueError):
        return None
    fields = dict(pairs)
    if not _dashboard(request).guard.token_matches(request, fields.get(FIELD, "")):
        return None
    return fields


def _refused_csrf() -> Response:
    return Response(
        "Forbidden: the form's CSRF token is missing or does not match this browser's "
        "session; reload the page and try again.",
        status_code=403,
        media_type="text/plain",
    )


async def retry(request: Request) -> Response:
    return await _job_action(request, JobSource.retry, "retried")


async def cancel(request: Request) -> Response:
    return await _job_action(request, JobSource.cancel, "cancelled")


async def _job_action(
    request: Request, action: Callable[[JobSource, str], Awaitable[bool]], done_word: str
) -> Response:
    """Run ``action`` on the job the path names; back to its page saying how it went."""
    if await _checked_form(request) is None:
        return _refused_csrf()
    job_id = request.path_params["job_id"]
    try:
        done = await action(_dashboard(request).source, job_id)
    except JobConfigError as refused:  # e.g. a dead job whose payload is gone
        return _render(request, "error.html", 400, message=str(refused))
    target = _path(request, "job", job_id=job_id)
    outcome = done_word if done else f"not-{done_word}"
    return RedirectResponse(f"{target}?done={outcome}", 303)


async def redrive(request: Request) -> Response:
    form = await _checked_form(request)
    if form is None:
        return _refused_csrf()
    source = _dashboard(request).source
    try:
        count = await source.redrive(form.get("queue") or None, form.get("name") or None)
    except JobConfigError as refused:
        return _render(request, "error.html", 400, message=str(refused))
    return RedirectResponse(f"{_path(request, 'dead')}?done=redriven&n={count}", 303)


async def pause_queue(request: Request) -> Response:
    return await _queue_action(request, paused=True)


async def resume_queue(request: Request) -> Response:
    return await _queue_action(request, paused=False)


async def _queue_action(request: Request, *, paused: bool) -> Response:
    """Pause or resume the queue the path names; back to the overview saying so."""
    if await _checked_form(request) is None:
        return _refused_csrf()
    try:
        await _dashboard(request).source.pause(request.path_params["queue"], paused)
    except JobConfigError as refused:
        return _render(request, "error.html", 400, message=str(refused))
    done = "paused" if paused else "resumed"
    return RedirectResponse(f"{_path(request, 'overview')}?done={done}", 303)
