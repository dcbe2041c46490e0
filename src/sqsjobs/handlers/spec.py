"""How a registered handler is called, worked out once when it is registered.

``HandlerSpec.inspect`` reads a handler's signature: with a parameter named ``payload``
it gets its parameters in declaration order (the validated payload, and the
``JobContext``), otherwise the context alone; a signature that would get the context
where its author meant the payload is refused here, not at its first run. The payload
model is ``model=`` when given, else the ``payload`` annotation when it names a pydantic
model. ``HandlerDefaults`` are the enqueue options a handler declares for its jobs
(``sqsjobs.handlers.registry``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, ValidationError

from ..core.errors import JobConfigError, JobFatalError
from ..core.validation import LEASE, TIMEOUT, check_queue_name, duration, integer
from .context import JobContext
from .limits import HandlerLimits

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails


class HandlerDefaults(NamedTuple):
    """What a handler declares for its jobs; ``None`` leaves the option to the producer.

    All four are enqueue defaults: the record is the one source of truth, and the store
    acts on most of it (where the job waits, when a lost lease dead-letters it) before any
    worker looks up the handler. Applying the handler's timeout at run time instead would
    make ``jobs show`` and the dashboard say one timeout while another applies.
    """

    queue: str | None = None
    max_attempts: int | None = None
    timeout: float | None = None
    lease: float | None = None

    @classmethod
    def build(
        cls,
        *,
        queue: object = None,
        max_attempts: object = None,
        timeout: object = None,
        lease: object = None,
    ) -> HandlerDefaults:
        """Checked as ``enqueue()`` checks the same options, so a default is never refused later."""
        return cls(
            queue=None if queue is None else check_queue_name(queue),
            max_attempts=None
            if max_attempts is None
            else integer(max_attempts, "max_attempts", minimum=1, code="invalid_option"),
            timeout=None
            if timeout is None
            else duration(timeout, "timeout", TIMEOUT, code="invalid_option"),
            lease=None if lease is None else duration(lease, "lease", LEASE, code="invalid_option"),
        )


NO_DEFAULTS = HandlerDefaults()


class HandlerSpec(NamedTuple):
    """A registered handler and how to call it, worked out once at registration."""

    name: str
    function: Callable[..., Any]
    model: type[BaseModel] | None
    order: tuple[str, ...]  # "payload" / "ctx" in the order the function takes them
    is_async: bool
    defaults: HandlerDefaults = NO_DEFAULTS
    limits: HandlerLimits | None = None  # fleet-wide, through the store's slots

    @classmethod
    def inspect(
        cls,
        name: str,
        function: object,
        model: type[BaseModel] | None = None,
        defaults: HandlerDefaults = NO_DEFAULTS,
    ) -> HandlerSpec:
        if not callable(function):
            raise JobConfigError(
                "invalid_option",
                f"Handler for {name!r} is a {type(function).__name__}; it must be callable",
            )
        order = _argument_order(name, function)
        if model is None and "payload" in order:
            model = _annotated_model(function)
        if model is not None and not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise JobConfigError(
                "invalid_option", f"Handler {name!r}: model must be a pydantic BaseModel subclass"
            )
        return cls(name, function, model, order, _is_async(function), defaults)

    def parse(self, payload: Any) -> Any:
        """The payload as the handler wants it; a mismatch is fatal, since no retry fixes it.

        The error names where and how the payload failed, never what it held: pydantic's
        own text quotes the input (``input_value='4111-...'``), and so may a validator's
        message, yet ``last_error`` and the logs must not carry a payload. The error is
        raised outside the ``except`` so it does not chain the ``ValidationError`` either.
        """
        if self.model is None:
            return payload
        try:
            return self.model.model_validate(payload)
        except ValidationError as invalid:
            problems = invalid.errors(include_url=False, include_context=False, include_input=False)
        raise JobFatalError(f"Payload does not match {self.model.__name__}: {_listed(problems)}")

    def arguments(self, ctx: JobContext) -> list[Any]:
        return [ctx.payload if part == "payload" else ctx for part in self.order]


def _listed(problems: list[ErrorDetails]) -> str:
    """``2 errors: card (string_pattern_mismatch), lines.1.qty (int_parsing)``."""
    count = f"{len(problems)} error{'' if len(problems) == 1 else 's'}"
    where = ", ".join(
        f"{'.'.join(str(part) for part in problem['loc']) or 'payload'} ({problem['type']})"
        for problem in problems
    )
    return f"{count}: {where}"


def _argument_order(name: str, function: Callable[..., Any]) -> tuple[str, ...]:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return ("ctx",)
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) > 2 or (not positional and not _takes_varargs(parameters)):
        raise JobConfigError(
            "invalid_option",
            f"Handler {name!r} takes {len(positional)} positional parameters; it must take "
            "ctx, payload, or both (in either order)",
        )
    names = [p.name for p in positional]
    if "payload" not in names:
        _check_context_parameters(name, function, positional)
        return ("ctx",)
    return tuple("payload" if n == "payload" else "ctx" for n in names)


def _check_context_parameters(
    name: str, function: Callable[..., Any], positional: list[inspect.Parameter]
) -> None:
    """Refuse a handler that would get the context where its author meant the payload.

    Without a parameter named ``payload``, a handler is called with the context alone: a
    second parameter it needs would make every run raise ``TypeError``, and a lone one
    annotated as something else (``data: dict``, a model) would get a ``JobContext`` and
    fail on it, retried to the end, after whatever it did first.
    """
    required = [p for p in positional if p.default is p.empty]
    if len(required) > 1:
        raise JobConfigError(
            "invalid_option",
            f"Handler {name!r} takes {len(required)} parameters and none is named 'payload': "
            "name the payload's parameter 'payload', or take the JobContext alone",
        )
    if positional and not _annotates_context(function, positional[0]):
        parameter = positional[0]
        raise JobConfigError(
            "invalid_option",
            f"Handler {name!r} takes one parameter, {parameter.name!r} annotated "
            f"{_spelled(parameter.annotation)}, and would be called with the JobContext: "
            "name it 'payload' to receive the payload, or annotate it JobContext",
        )


def _annotates_context(function: Callable[..., Any], parameter: inspect.Parameter) -> bool:
    """Whether ``parameter`` takes a ``JobContext``: not annotated, or annotated so."""
    annotation = parameter.annotation
    if isinstance(annotation, str):
        if annotation.split(".")[-1].strip("'\"") in ("JobContext", "Any", "object"):
            return True
        annotation = _resolved(function, annotation)
        if annotation is None:
            return False
    if annotation in (parameter.empty, Any, object):
        return True
    return isinstance(annotation, type) and issubclass(annotation, JobContext)


def _spelled(annotation: object) -> str:
    name = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", None)
    return str(name or annotation)


def _takes_varargs(parameters: list[inspect.Parameter]) -> bool:
    return any(p.kind is p.VAR_POSITIONAL for p in parameters)


def _annotated_model(function: Callable[..., Any]) -> type[BaseModel] | None:
    """The ``payload`` annotation if it names a model; only that one annotation is resolved."""
    parameter = inspect.signature(function).parameters["payload"]
    annotation = parameter.annotation
    if isinstance(annotation, str):
        annotation = _resolved(function, annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _resolved(function: Callable[..., Any], annotation: str) -> object:
    """A string annotation as the function's module reads it; ``None`` if it cannot."""
    namespace = getattr(inspect.unwrap(function), "__globals__", {})
    try:
        return eval(annotation, namespace)
    except Exception:
        return None


def _is_async(function: Callable[..., Any]) -> bool:
    call = getattr(function, "__call__", None)  # noqa: B004 - async callable objects
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(call)
