"""A web dashboard for sqsjobs: queues, jobs, dead letters; to mount in an ASGI app.

``make_dashboard(store_or_queue)`` returns a Starlette app, server-rendered (Jinja2) and
refreshed in place by the vendored htmx (``static/NOTICE``); ``sqsjobs dashboard``
serves one on 127.0.0.1. It answers only for the Host 127.0.0.1, localhost, ::1 and
``allowed_hosts``; it is read-only unless ``actions=True``; ``auth`` decides per request;
every action is a same-origin POST with a CSRF token and a small body;
``show_payloads=False`` hides payloads, results, progress, idempotency keys and error messages.
``allowed_names(names)`` checks ``allowed_hosts`` as ``make_dashboard`` does, for a
caller that takes them from elsewhere (``sqsjobs dashboard --allowed-host``) and wants
to refuse a wrong one before it builds the app. Needs the ``dashboard`` extra
(starlette, jinja2; uvicorn for the command). See docs/how-to/dashboard.md.
"""

from __future__ import annotations

try:
    from ._app import make_dashboard
    from ._fence import allowed_names
    from ._guard import Auth
except ModuleNotFoundError as missing:
    package = (missing.name or "").partition(".")[0]
    if package not in ("starlette", "jinja2"):
        raise
    raise ImportError(
        f"sqsjobs.contrib.dashboard needs the dashboard extra ({package} is not "
        "installed): pip install 'sqsjobs[dashboard]'",
        name=package,
    ) from missing

__all__ = ["Auth", "allowed_names", "make_dashboard"]
