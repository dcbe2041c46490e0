"""The blocking driver's ``Parallel`` steps: overlapped in threads, and a Ctrl-C that ends
the command at once, even while calls hang on a silent endpoint."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from sqsjobs.aws.wire.protocol import MAX_PARALLEL, Call, Flow, Parallel, drive


def many(count: int) -> Flow[list[Any]]:
    replies = yield Parallel(tuple(Call("dynamodb", "query", {"n": n}) for n in range(count)))
    return list(replies)


def test_the_replies_of_a_parallel_step_come_back_in_order() -> None:
    assert drive(many(25), lambda call: {"n": call.params["n"]}) == [{"n": n} for n in range(25)]


def test_an_error_that_is_not_aws_s_is_raised_by_the_driver() -> None:
    def send(call: Call) -> dict[str, Any]:
        if call.params["n"] == 7:
            raise LookupError("no such table")
        return {}

    with pytest.raises(LookupError, match="no such table"):
        drive(many(12), send)


@pytest.fixture
def silent() -> Iterator[threading.Event]:
    """Calls that hang until the test ends, as on an endpoint that never answers."""
    answer = threading.Event()
    yield answer
    answer.set()


def test_an_interrupt_ends_the_step_while_calls_still_hang(silent: threading.Event) -> None:
    started: list[int] = []
    all_busy = threading.Event()
    lock = threading.Lock()

    def send(call: Call) -> dict[str, Any]:
        with lock:
            started.append(call.params["n"])
            if len(started) == MAX_PARALLEL:
                all_busy.set()
        silent.wait()
        return {}

    def interrupt() -> None:
        all_busy.wait()
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, every thread waiting on AWS

    threading.Thread(target=interrupt, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        drive(many(MAX_PARALLEL * 3), send)
    assert len(started) == MAX_PARALLEL  # the others were dropped, not started later
    silent.set()


def test_a_process_interrupted_during_hanging_calls_exits_without_waiting_for_them() -> None:
    """The interpreter does not wait at exit for calls left in flight."""
    script = textwrap.dedent(
        """
        import sys, threading
        from sqsjobs.aws.wire.protocol import Call, Parallel, drive

        def many():
            yield Parallel(tuple(Call("sqs", "receive_message", {"n": n}) for n in range(30)))

        def send(call):
            if call.params["n"] == 0:
                print("waiting", flush=True)
            threading.Event().wait()  # never answered

        try:
            drive(many(), send)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(0)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline() == "waiting\n"
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=60)  # a process that waited would hang here
        assert (process.returncode, out) == (0, "interrupted\n")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
