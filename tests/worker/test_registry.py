"""JobRegistry: calling conventions, payload models, and what it refuses at registration."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel

from sqsjobs import JobConfigError, JobContext, JobRegistry, JobStatus, JobWorker
from sqsjobs.handlers.registry import HandlerSpec

from .conftest import Env

if TYPE_CHECKING:
    from decimal import Decimal  # unresolvable at run time: must not matter


class Email(BaseModel):
    to: str
    subject: str = "hello"


def test_ctx_only_handler_is_called_with_the_context() -> None:
    def handler(ctx: JobContext) -> None: ...

    assert HandlerSpec.inspect("a", handler).order == ("ctx",)


@pytest.mark.parametrize(
    ("function", "order"),
    [
        (lambda payload: None, ("payload",)),
        (lambda payload, ctx: None, ("payload", "ctx")),
        (lambda ctx, payload: None, ("ctx", "payload")),
        (lambda context: None, ("ctx",)),
    ],
)
def test_parameters_are_passed_in_declaration_order(function: Any, order: tuple[str, ...]) -> None:
    assert HandlerSpec.inspect("a", function).order == order


def test_payload_annotation_names_the_model_even_as_a_string_annotation() -> None:
    def handler(payload: Email, ctx: Decimal) -> None: ...

    assert HandlerSpec.inspect("a", handler).model is Email


def test_explicit_model_wins_and_plain_annotations_give_none() -> None:
    def handler(payload: dict[str, Any]) -> None: ...

    assert HandlerSpec.inspect("a", handler).model is None
    assert HandlerSpec.inspect("a", handler, model=Email).model is Email


@pytest.mark.parametrize(
    ("name", "function", "code"),
    [
        ("bad name", lambda ctx: None, "invalid_name"),
        ("ok", "not callable", "invalid_option"),
        ("ok", lambda a, b, c: None, "invalid_option"),
        ("ok", lambda: None, "invalid_option"),
    ],
)
def test_registration_refuses_bad_handlers(name: str, function: Any, code: str) -> None:
    with pytest.raises(JobConfigError) as raised:
        JobRegistry().add(name, function)
    assert raised.value.code == code


class Invoice(BaseModel):
    number: str


def data_dict(data: dict[str, Any]) -> None: ...


def data_model(invoice: Invoice) -> None: ...


def two_without_payload(ctx: JobContext, data: dict[str, Any]) -> None: ...


@pytest.mark.parametrize(
    ("function", "said"),
    [
        (data_dict, "takes one parameter, 'data' annotated dict[str, Any], and would be called"),
        (data_model, "takes one parameter, 'invoice' annotated Invoice, and would be called"),
        (two_without_payload, "takes 2 parameters and none is named 'payload'"),
    ],
)
def test_a_handler_that_would_get_the_context_for_its_payload_is_refused(
    function: Any, said: str
) -> None:
    """``def h(data: dict)`` was called with the JobContext and failed on it, retried to
    the end; it is refused at registration, naming the handler and the fix."""
    with pytest.raises(JobConfigError) as raised:
        JobRegistry().add("invoice.send", function)
    assert raised.value.code == "invalid_option"
    assert str(raised.value).startswith(f"Handler 'invoice.send' {said}")


class Context(JobContext):
    """A subclass, as an application's typed context may be."""


def context_annotated(ctx: JobContext) -> None: ...


def context_subclass(ctx: Context) -> None: ...


def context_defaulted(ctx: JobContext, retries: int = 3) -> None: ...


@pytest.mark.parametrize(
    "function",
    [context_annotated, context_subclass, context_defaulted, lambda job: None, print],
)
def test_a_lone_parameter_taking_the_context_is_accepted(function: Any) -> None:
    assert HandlerSpec.inspect("a", function).order == ("ctx",)


def test_a_name_is_registered_once() -> None:
    registry = JobRegistry()
    registry.add("a", lambda ctx: None)
    with pytest.raises(JobConfigError, match="already registered"):
        registry.add("a", lambda ctx: None)


def test_decorator_returns_the_function_itself() -> None:
    registry = JobRegistry()

    async def send(payload: Email) -> None: ...

    assert registry.handler("email.send")(send) is send
    assert "email.send" in registry


@pytest.mark.parametrize(
    ("handlers", "error", "code"),
    [
        ({}, JobConfigError, "unknown_handler"),
        (JobRegistry(), JobConfigError, "unknown_handler"),
        ({"no spaces": lambda ctx: None}, JobConfigError, "invalid_name"),
        ({"ok": 42}, JobConfigError, "invalid_option"),
    ],
)
def test_worker_refuses_bad_registries(env: Env, handlers: Any, error: type, code: str) -> None:
    with pytest.raises(error) as raised:
        JobWorker(env.queue, handlers)
    assert raised.value.code == code  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "options",
    [{"concurrency": 0}, {"concurrency": 1001}, {"concurrency": True}, {"poll_interval": 0}],
)
def test_worker_refuses_out_of_range_options(env: Env, options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        JobWorker(env.queue, {"a": lambda ctx: None}, **options)


async def test_model_payload_is_validated_and_passed(env: Env) -> None:
    seen: list[Any] = []
    registry = JobRegistry()

    @registry.handler("email.send")
    async def send(payload: Email, ctx: JobContext) -> str:
        seen.append((payload, ctx.payload))
        return payload.to

    job = (await env.queue.enqueue("email.send", {"to": "a@example.com"})).job
    assert await JobWorker(env.queue, registry).run_once()
    assert seen == [(Email(to="a@example.com"), Email(to="a@example.com"))]
    done = await env.queue.get(job.id)
    assert done is not None and done.status is JobStatus.COMPLETED
    assert done.result == "a@example.com"


async def test_payload_failing_its_model_dead_letters_at_once(env: Env) -> None:
    registry = JobRegistry()
    registry.add("email.send", lambda payload: None, model=Email)
    job = (await env.queue.enqueue("email.send", {"subject": "no recipient"})).job
    assert await JobWorker(env.queue, registry).run_once()
    dead = await env.queue.get(job.id)
    assert dead is not None and dead.status is JobStatus.DEAD and dead.attempts == 1
    assert dead.last_error is not None
    assert dead.last_error.startswith("JobFatalError: Payload does not match Email")


async def test_plain_mapping_handlers_follow_the_same_convention(env: Env) -> None:
    got: list[Any] = []
    job = (await env.queue.enqueue("a", {"x": 1})).job
    worker = JobWorker(env.queue, {"a": lambda payload: got.append(payload) or "done"})
    assert await worker.run_once()
    assert got == [{"x": 1}]
    done = await env.queue.get(job.id)
    assert done is not None and done.result == "done"
