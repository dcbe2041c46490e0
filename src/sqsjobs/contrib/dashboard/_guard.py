"""Who may see the dashboard, and proof that an action was asked for by its own page.

Three rules, applied to every request before any page or action runs (after the checks
of ``_fence``: the Host a request is for, and an action's origin and size):

1. ``auth`` (the host app's hook) decides per request; a refusal is a 403 and nothing
   else happens. Without a hook, anyone who reaches the app may read it: the CLI binds
   127.0.0.1 only, and a host app that mounts the dashboard is expected to give one.
   "Reaches" means by one of the dashboard's own names: a page that rebinds its name to
   127.0.0.1 is refused by ``_fence`` for the Host it sends, so it cannot read a token.
2. A GET (or HEAD) never changes anything; every action is a POST, and a POST to a
   dashboard whose actions are off is refused (403), whatever it carries.
3. Every POST carries a CSRF token tied to the browser's cookie. The cookie holds a
   random session value; the token is its HMAC under the dashboard's secret, so another
   site can neither read it (SameSite=Strict, HttpOnly cookie; same-origin pages) nor
   mint one for a cookie it planted. A missing or wrong token is a 403.
"""

from __future__ import annotations

import hashlib
import hmac
import inspect
import secrets
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

Auth = Callable[[Request], bool | Awaitable[bool]]
"""``make_dashboard``'s ``auth``: called with each request, it lets it through by
returning True (or an awaitable of True); anything else is a 403."""

COOKIE = "sqsjobs_dashboard"
FIELD = "csrf_token"
SAFE_METHODS = frozenset({"GET", "HEAD"})


class Guard:
    """The dashboard's auth hook, its actions switch and its CSRF secret."""

    def __init__(self, *, auth: Auth | None, actions: bool, secret: bytes | None) -> None:
        self.auth = auth
        self.actions = actions
        self.secret = secret if secret is not None else secrets.token_bytes(32)

    async def allowed(self, request: Request) -> bool:
        """The host app's verdict on this request (True without a hook)."""
        if self.auth is None:
            return True
        verdict = self.auth(request)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return verdict is True

    def session(self, request: Request) -> str:
        """The browser's session value: its cookie, or a new one to set."""
        current = request.cookies.get(COOKIE, "")
        return current if _well_formed(current) else secrets.token_urlsafe(24)

    def token(self, session: str) -> str:
        """The CSRF token for a session: what every action form carries."""
        return hmac.new(self.secret, session.encode(), hashlib.sha256).hexdigest()

    def token_matches(self, request: Request, sent: str) -> bool:
        session = request.cookies.get(COOKIE, "")
        if not _well_formed(session) or not sent:
            return False
        return hmac.compare_digest(self.token(session), sent)

    def keep_session(self, request: Request, response: Response, session: str) -> None:
        """Set the session cookie when the browser does not have this one yet."""
        if request.cookies.get(COOKIE) != session:
            response.set_cookie(
                COOKIE,
                session,
                httponly=True,
                samesite="strict",
                secure=request.url.scheme == "https",
                path=request.scope.get("root_path") or "/",
            )


def _well_formed(session: str) -> bool:
    return 16 <= len(session) <= 64 and all(c.isalnum() or c in "-_" for c in session)
