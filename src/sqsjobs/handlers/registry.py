"""Handlers: the allowlist of job names a worker runs, and what each one is called with.

A handler is registered under a job name; no code path resolves a handler by import or
by attribute lookup, so a forged job name can only dead-letter, never run arbitrary code.

Calling convention: a handler with a parameter named ``payload`` gets its parameters in
declaration order (``payload`` the validated payload, the other one the ``JobContext``);
any other handler gets the context alone. The payload model is ``model=`` when given,
else the ``payload`` annotation when it names a pydantic model.

A handler may also declare defaults for its jobs (``HandlerDefaults``): a producer built
with the registry (``JobQueue(store, registry=...)``) fills the options an enqueue leaves
out from them. They act only through the record that producer writes: a worker applies
the record's options, and warns when a record holds the library's defaults where its
handler declares others (``worker.declared_options``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from pydantic import BaseModel

from ..core.errors import JobConfigError
from ..core.validation import check_job_name
from ..cron.declared import cron_class, merged
from .context import JobContext
from .limits import HandlerLimits
from .spec import NO_DEFAULTS as NO_DEFAULTS  # re-exported: where they were declared first
from .spec import HandlerDefaults as HandlerDefaults
from .spec import HandlerSpec as HandlerSpec

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..core.options import CronOptions  # an annotation: the run path builds no requests
    from ..cron.schedule import Cron

Handler = Callable[[JobContext], Awaitable[Any]] | Callable[[JobContext], Any]
"""A job's handler: a function or coroutine function that gets the ``JobContext``, or
the payload and the context (see the module docs); what it returns is the job's result."""
F = TypeVar("F", bound=Callable[..., Any])


def _checked(options: dict[str, Any]) -> tuple[HandlerDefaults, HandlerLimits | None]:
    """A handler's options, each checked as its rule says; refused before anything is kept."""
    names = ("concurrency", "rate", "per_tenant")
    defaults = {k: v for k, v in options.items() if k not in names}
    return HandlerDefaults.build(**defaults), HandlerLimits.build(**{k: options[k] for k in names})


class JobRegistry:
    """The job names a worker may run, each bound to its handler."""

    def __init__(self) -> None:
        self._specs: dict[str, HandlerSpec] = {}
        self._crons: list[Cron] = []

    def handler(
        self,
        name: str,
        *,
        model: type[BaseModel] | None = None,
        queue: str | None = None,
        max_attempts: int | None = None,
        timeout: float | timedelta | None = None,
        lease: float | timedelta | None = None,
        concurrency: int | None = None,
        rate: tuple[int, float] | None = None,
        per_tenant: bool = False,
    ) -> Callable[[F], F]:
        """Register the decorated function as the handler for job ``name``.

        ``queue`` to ``lease`` are defaults for its jobs (``HandlerDefaults``), which a
        producer built with this registry fills in where an enqueue leaves them out;
        ``concurrency``, ``rate`` and ``per_tenant`` limit its runs fleet-wide
        (``HandlerLimits``). All are checked here, before any function is given.

        Args:
            name: The job name it runs, as producers enqueue it.
            model: The pydantic model its payload is validated into; left out, the
                ``payload`` parameter's annotation when it names a model.
            queue: The queue its jobs go to.
            max_attempts: Attempts before a job that keeps failing is dead.
            timeout: How long one attempt may run (seconds or a ``timedelta``).
            lease: How long a claim holds a job between heartbeats.
            concurrency: The most runs at once, across every worker and Lambda handler
                sharing the store (1 to 100).
            rate: ``(count, per_seconds)``: the most starts in any such window.
            per_tenant: Apply ``concurrency`` and ``rate`` to each tenant apart.

        Returns:
            The decorator, which registers the function and returns it unchanged.

        Raises:
            JobConfigError: An invalid name or option, at once; when decorating, a name
                already registered or a function it cannot call as a handler.
        """
        options: dict[str, Any] = {"queue": queue, "max_attempts": max_attempts}
        options |= {"timeout": timeout, "lease": lease, "concurrency": concurrency}
        options |= {"rate": rate, "per_tenant": per_tenant}
        check_job_name(name)
        _checked(options)

        def register(function: F) -> F:
            self.add(name, function, model=model, **options)
            return function

        return register

    def add(
        self,
        name: str,
        function: Any,
        *,
        model: type[BaseModel] | None = None,
        queue: str | None = None,
        max_attempts: int | None = None,
        timeout: float | timedelta | None = None,
        lease: float | timedelta | None = None,
        concurrency: int | None = None,
        rate: tuple[int, float] | None = None,
        per_tenant: bool = False,
    ) -> None:
        """Register ``function`` as the handler for job ``name``: the decorator's
        undecorated form, for a function defined elsewhere or a callable object. ``model``
        and the options mean what they do for [`handler`][sqsjobs.JobRegistry.handler].

        Args:
            name: The job name it runs.
            function: The handler ([`Handler`][sqsjobs.Handler]).

        Raises:
            JobConfigError: An invalid name or option, a name already registered, or a
                function that cannot be called as a handler; nothing is registered.
        """
        check_job_name(name)
        defaults, limits = _checked(
            {"queue": queue, "max_attempts": max_attempts, "timeout": timeout, "lease": lease}
            | {"concurrency": concurrency, "rate": rate, "per_tenant": per_tenant}
        )
        if name in self._specs:
            raise JobConfigError("invalid_option", f"A handler for {name!r} is already registered")
        spec = HandlerSpec.inspect(name, function, model, defaults)
        self._specs[name] = spec._replace(limits=limits)

    def defaults(self, name: str) -> HandlerDefaults:
        """What the handler for ``name`` declares; nothing for a name with no handler."""
        spec = self._specs.get(name)
        return NO_DEFAULTS if spec is None else spec.defaults

    @classmethod
    def from_handlers(cls, handlers: JobRegistry | Mapping[str, Any]) -> JobRegistry:
        """A registry from a registry or a plain ``{name: handler}`` mapping; never empty."""
        if isinstance(handlers, JobRegistry):
            registry = handlers
        elif isinstance(handlers, Mapping):
            registry = cls()
            for name, function in handlers.items():
                registry.add(name, function)
        else:
            raise JobConfigError(
                "unknown_handler",
                f"handlers must be a JobRegistry or a mapping of job name to handler, "
                f"got {type(handlers).__name__}",
            )
        if not registry._specs:
            raise JobConfigError(
                "unknown_handler",
                "The handler registry is empty: every claimed job would dead-letter. "
                "Register handlers with @registry.handler('name').",
            )
        return registry

    def get(self, name: str) -> HandlerSpec | None:
        """The handler registered for ``name`` and how it is called; None if there is none."""
        return self._specs.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def cron(
        self,
        schedule: str,
        name: str,
        payload: Any = None,
        *,
        timezone: str = "UTC",
        **options: Unpack[CronOptions],
    ) -> Cron:
        """Declare a cron that every worker built from this registry runs, beside its ``cron=``.

        It is checked here, as ``Cron`` checks it, so a typo in a schedule fails when the
        application imports its registry rather than at the first tick.
        """
        declared = cron_class()(schedule, name, payload, timezone, options)
        if declared in self._crons:
            raise JobConfigError(
                "invalid_option",
                f"The cron {name!r} at {schedule!r} is already declared on this registry",
            )
        self._crons.append(declared)
        return declared

    @property
    def crons(self) -> tuple[Cron, ...]:
        """The crons declared with ``cron()``, in declaration order."""
        return tuple(self._crons)

    def crons_with(self, cron: Iterable[Cron]) -> tuple[Cron, ...]:
        """``cron`` and this registry's crons, each once: what a worker built from it runs."""
        return merged(cron, self._crons)
