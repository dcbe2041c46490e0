"""An action's body is a tiny form: a larger one is refused before it is read.

By ``Content-Length`` when the request gives one (413 before a byte of the body is
taken); a chunked body without one is read up to the limit (4 KiB) and then refused. The
bytes the dashboard takes are counted where it takes them, the ASGI receive channel:
directly, and under uvicorn with a raw socket that announces 200 MB and gets its answer
after sending the first 64 KiB.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

from starlette.testclient import TestClient
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sqsjobs import JobStatus, MemoryJobStore
from sqsjobs.contrib.dashboard import make_dashboard

from .browser import served
from .conftest import csrf_token
from .seed import Seeded
from .test_safety import status_of

LIMIT = 4096  # docs/how-to/dashboard.md: an action's form is at most 4 KiB
HUGE = 200_000_000
FORM = b"application/x-www-form-urlencoded"


class Body:
    """A request body of ``total`` bytes, handed out ``chunk`` bytes a message, as asked."""

    def __init__(self, total: int, chunk: int) -> None:
        self.total = total
        self.chunk = chunk
        self.taken = 0

    async def receive(self) -> Message:
        if self.taken > LIMIT + self.chunk:
            raise AssertionError(f"the dashboard read {self.taken} bytes of a {self.total} body")
        size = min(self.chunk, self.total - self.taken)
        self.taken += size
        return {"type": "http.request", "body": b"q" * size, "more_body": self.taken < self.total}


async def post(app: ASGIApp, path: str, body: Body, headers: list[tuple[bytes, bytes]]) -> Message:
    """``app``'s answer to a POST of ``body``: the start message, with the text added."""
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8321"), (b"content-type", FORM), *headers],
        "client": ("127.0.0.1", 50123),
        "server": ("127.0.0.1", 8321),
    }
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, body.receive, send)
    return {**sent[0], "text": b"".join(m.get("body", b"") for m in sent[1:]).decode()}


async def test_a_content_length_over_the_limit_is_a_413_before_any_byte_is_read(
    store: MemoryJobStore, seeded: Seeded
) -> None:
    body = Body(HUGE, 65_536)
    path = f"/jobs/{seeded.waiting[0]}/cancel"
    answer = await post(
        make_dashboard(store, actions=True), path, body, [(b"content-length", b"%d" % HUGE)]
    )
    assert answer["status"] == 413
    assert "at most 4096 bytes" in answer["text"] and f"{HUGE} bytes" in answer["text"]
    assert body.taken == 0
    assert status_of(store, seeded.waiting[0]) is JobStatus.QUEUED


async def test_a_chunked_body_is_read_up_to_the_limit_then_refused(
    store: MemoryJobStore, seeded: Seeded
) -> None:
    body = Body(HUGE, 1000)
    answer = await post(make_dashboard(store, actions=True), "/dead/redrive", body, [])
    assert answer["status"] == 413 and "at most 4096 bytes" in answer["text"]
    assert LIMIT < body.taken <= LIMIT + body.chunk
    assert status_of(store, seeded.dead) is JobStatus.DEAD


async def test_a_content_length_that_is_not_a_number_is_a_400(store: MemoryJobStore) -> None:
    body = Body(10, 10)
    answer = await post(
        make_dashboard(store, actions=True), "/dead/redrive", body, [(b"content-length", b"ten")]
    )
    assert answer["status"] == 400 and "Content-Length" in answer["text"]
    assert body.taken == 0


def test_a_small_chunked_form_still_takes_its_action(
    acting: TestClient, store: MemoryJobStore, seeded: Seeded
) -> None:
    token = csrf_token(acting.get(f"/jobs/{seeded.dead}").text)

    def pieces() -> Iterator[bytes]:
        yield b"csrf_token="
        yield token.encode()

    done = acting.post(
        f"/jobs/{seeded.dead}/retry",
        content=pieces(),
        headers={"content-type": FORM.decode()},
        follow_redirects=False,
    )
    assert done.status_code == 303
    assert status_of(store, seeded.dead) is JobStatus.QUEUED


class Counted:
    """``app`` with the body bytes it takes from the receive channel counted."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.taken = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def counting() -> Message:
            message = await receive()
            self.taken += len(message.get("body", b""))
            return message

        await self.app(scope, counting, send)


def reply_to(connection: socket.socket) -> tuple[int, str]:
    """The status and body of the one response on ``connection``."""
    data = b""
    while b"\r\n\r\n" not in data:
        received = connection.recv(65_536)
        if not received:
            raise AssertionError("the server closed the connection without answering")
        data += received
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(
        int(line.split(":")[1]) for line in lines if line.lower().startswith("content-length:")
    )
    while len(rest) < length:
        rest += connection.recv(65_536)
    return int(lines[0].split()[1]), rest[:length].decode()


def request_head(port: int, path: str, framing: str) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/x-www-form-urlencoded\r\n{framing}\r\n\r\n"
    ).encode()


def test_uvicorn_answers_a_200_mb_post_while_it_is_still_being_sent(
    store: MemoryJobStore, seeded: Seeded
) -> None:
    app = Counted(make_dashboard(store, actions=True))
    with served(app) as base:
        port = int(base.rsplit(":", 1)[1])
        path = f"/jobs/{seeded.waiting[1]}/cancel"
        with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
            connection.sendall(request_head(port, path, f"Content-Length: {HUGE}"))
            connection.sendall(b"q" * 65_536)  # the first 64 KiB of 200 MB
            status, text = reply_to(connection)
    assert status == 413 and "at most 4096 bytes" in text
    assert app.taken == 0
    assert status_of(store, seeded.waiting[1]) is JobStatus.QUEUED


def test_uvicorn_refuses_an_endless_chunked_post_before_its_end(
    store: MemoryJobStore, seeded: Seeded
) -> None:
    app = Counted(make_dashboard(store, actions=True))
    with served(app) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
            connection.sendall(request_head(port, "/dead/redrive", "Transfer-Encoding: chunked"))
            for _ in range(64):  # 64 KiB in 1 KiB chunks, and never the last chunk
                connection.sendall(b"400\r\n" + b"q" * 1024 + b"\r\n")
            status, text = reply_to(connection)
    assert status == 413 and "at most 4096 bytes" in text
    assert LIMIT < app.taken <= 65_536
    assert status_of(store, seeded.dead) is JobStatus.DEAD
